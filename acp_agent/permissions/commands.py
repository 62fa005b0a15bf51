"""The permissions package's slash commands: `/permissions` (the project's saved rules, numbered:
commands, then tools' scopes; `/permissions remove <n>` removes one) and `/sandbox` (how the session's commands are
confined: backend, ABI, enforcement, policy, writable roots). Both answer without the model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from acp_agent.commands.builtins import answer
from acp_agent.commands.registry import Command, Invocation
from acp_agent.instructions.files import project_root
from acp_agent.permissions import texts
from acp_agent.permissions.modes import SANDBOX_OF
from acp_agent.sandbox import texts as sandbox_texts
from acp_agent.sandbox.backends import Backend
from acp_agent.sandbox.policy import FULL_ACCESS
from acp_agent.sandbox.service import SANDBOX
from acp_agent.tools.roots import roots_of
from acp_agent.tools.sandboxing import NO_SANDBOX
from acp_agent.tools.scratch import agent_scratch

if TYPE_CHECKING:
    from acp_agent.agent.agent import Ticket
    from acp_agent.permissions.service import Permissions


def permissions_command(permissions: Permissions) -> Command:
    def run(invocation: Invocation) -> Ticket:
        project = project_root(Path(invocation.agent.session.cwd or "."))
        rules = permissions.rules.saved(project) if permissions.rules is not None else []
        listed = [texts.saved_rule(rule) for rule in rules]
        words = invocation.arguments.split()
        if not words:
            said = texts.rules_list(str(project), listed) if listed else texts.NO_RULES.format(project=project)
            settings = [(r.decision, r.text, str(r.source)) for r in permissions.settings_rules(invocation.agent)]
            return answer(invocation, f"{said}\n\n{texts.settings_list(settings)}" if settings else said)
        number = words[1] if len(words) == 2 and words[0] == "remove" else ""
        if not number.isdigit() or not 1 <= int(number) <= len(rules) or permissions.rules is None:
            return answer(invocation, texts.no_such_rule(number or repr(invocation.arguments), len(rules)))
        rule = rules[int(number) - 1]
        permissions.rules.remove(project, rule)
        return answer(invocation, texts.rule_removed(texts.saved_rule(rule)))

    return Command("permissions", texts.PERMISSIONS_DESCRIPTION, run, texts.PERMISSIONS_HINT)


def sandbox_command(permissions: Permissions) -> Command:
    def run(invocation: Invocation) -> Ticket:
        agent = invocation.agent
        kind = SANDBOX_OF[permissions.mode(agent)]
        sandbox = agent.ctx.find(SANDBOX)
        if sandbox is None:
            backend = Backend("none", "none", (NO_SANDBOX,))
            return answer(invocation, sandbox_texts.report(backend, kind, [], [], "allow"))
        cwd = Path(agent.session.cwd or ".")
        scratch = agent_scratch(agent)
        writable = [] if kind == FULL_ACCESS else list(sandbox.writable(kind, cwd, scratch, roots_of(agent).additional))
        writable = [texts.scratch_root(root) if Path(root) == scratch.resolve() else root for root in writable]
        return answer(
            invocation, sandbox_texts.report(sandbox.backend, kind, writable, list(sandbox.hidden), sandbox.network)
        )

    return Command("sandbox", texts.SANDBOX_DESCRIPTION, run)
