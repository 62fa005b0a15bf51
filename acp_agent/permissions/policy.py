"""The decision before a call of a tool that needs approval: run it (and under which sandbox
policy, for a command), ask the user, or refuse it.

Hard limits first: the deployment's `deny` refuses in every mode, and a call that asks to escalate
(run outside the sandbox) is refused in `plan` and asked about in `ask` and `auto` whatever was
answered "always" before. Then the user's standing "reject". Then the mode: `plan` runs commands
read-only without asking and refuses every other change; `full` runs everything, commands
unconfined; `auto` runs commands (sandboxed) and file edits. Then the user's standing "allow" and
the deployment's rule (`allow` or `ask`). Whatever runs without asking, a command runs in the
mode's sandbox: only an escalation the user allowed, or `full`, runs one unconfined.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from acp_agent.kernel.models import Model
from acp_agent.permissions import texts
from acp_agent.permissions.modes import AUTO, FULL, PLAN, SANDBOX_OF
from acp_agent.sandbox.policy import FULL_ACCESS, Kind

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


class Run(NamedTuple):
    """Run the call; a command under `sandbox` (None: the tool runs no command)."""

    sandbox: Kind | None = None


class Ask(NamedTuple):
    """Ask the user; allowed, the call runs as `Run(sandbox)` would. `escalation`: the call asks to
    run outside the sandbox (the user may allow it once, never always)."""

    sandbox: Kind | None = None
    escalation: bool = False


Verdict = Run | Ask | Refuse


def decide(
    *,
    tool: str,
    edits_files: bool,
    mode: str,
    grant: Literal["allow", "reject"] | None,
    rule: Rule,
    runs_commands: bool = False,
    escalate: bool = False,
    only_reads: bool = False,
) -> Verdict:
    """What to do with a call of `tool` (which needs approval). `edits_files`: the tool only edits
    files in the workspace (`auto` runs those); `runs_commands`: its calls run commands, which a
    mode confines; `escalate`: this call asks to run its command outside the sandbox; `only_reads`:
    it changes nothing (web_fetch), so every mode but `ask` runs it without asking."""
    sandbox = SANDBOX_OF[mode] if runs_commands else None
    if rule == "deny":
        return Refuse(texts.denied(tool), "denied")
    if runs_commands and escalate and mode != FULL:
        if mode == PLAN:
            return Refuse(texts.plan_escalation(tool), "plan_mode")
        return Ask(FULL_ACCESS, escalation=True)
    if only_reads and mode in (AUTO, PLAN, FULL) and grant != "reject":
        return Run()
    if grant == "reject":
        return Refuse(texts.declined_always(tool), "declined")
    if mode == PLAN and not runs_commands:
        return Refuse(texts.plan_mode(tool), "plan_mode")
    if mode in (PLAN, FULL) or (mode == AUTO and (edits_files or runs_commands)):
        return Run(sandbox)
    if grant == "allow" or rule == "allow":
        return Run(sandbox)
    return Ask(sandbox)
