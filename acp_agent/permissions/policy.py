"""The decision before a call of a tool that needs approval: run it, ask the user, or refuse it.

Hard limits first: the deployment's `deny` and the read-only `plan` mode refuse whatever the user
said "always" to before (a grant from an `ask` session must not outlive a switch to `plan`). Then
the session's "always" answers, then the `auto` mode (file edits run), then the deployment's rule
for the tool (`allow` or `ask`).
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from acp_agent.kernel.models import Model
from acp_agent.permissions import texts
from acp_agent.permissions.modes import AUTO, PLAN

Rule = Literal["ask", "allow", "deny"]


class Policy(Model):
    """The deployment's rules: `default` for every tool that needs approval, `tools` per tool name."""

    default: Rule = "ask"
    tools: dict[str, Rule] = {}

    def rule(self, tool: str) -> Rule:
        return self.tools.get(tool, self.default)


class Refuse(NamedTuple):
    """Do not run the call: the model reads `Error: <message>`; `code` goes to the log."""

    message: str
    code: str


Verdict = Literal["run", "ask"] | Refuse
RUN: Final = "run"
ASK: Final = "ask"


def decide(
    *,
    tool: str,
    edits_files: bool,
    mode: str,
    grant: Literal["allow", "reject"] | None,
    rule: Rule,
    only_reads: bool = False,
) -> Verdict:
    """What to do with a call of `tool` (which needs approval). `edits_files`: the tool declares that it
    only edits files in the workspace, which the `auto` mode runs without asking. `only_reads`: it
    changes nothing (web_fetch), so `auto` and `plan` run it without asking."""
    if rule == "deny":
        return Refuse(texts.denied(tool), "denied")
    if only_reads and mode in (AUTO, PLAN) and grant != "reject":
        return RUN
    if mode == PLAN:
        return Refuse(texts.plan_mode(tool), "plan_mode")
    if grant == "reject":
        return Refuse(texts.declined_always(tool), "declined")
    if grant == "allow" or (mode == AUTO and edits_files) or rule == "allow":
        return RUN
    return ASK
