"""`ctx.get(PERMISSIONS)`: session modes, the user's "always" answers, and the gate before each call.

The gate (registered for every agent in `ctx.get(TOOLS)`) lets a call of a tool that does not need
approval through at once. For one that does, `policy.decide` rules with the calling agent's mode,
the thread's grants and the deployment's policy; `ask` goes to the installed `Asker`. A thread's
grants live in its top-level session (the one the user sees): a child's call answered "always"
holds for the parent and every other child too, and survives `session/load` with that session.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import anyio

from acp_agent.agent.calling import calling_agent
from acp_agent.agent.keys import AGENTS
from acp_agent.instructions.files import project_root
from acp_agent.kernel.context import ServiceKey
from acp_agent.kernel.scope import Disposer
from acp_agent.permissions import texts
from acp_agent.permissions.asker import SCOPE_ALWAYS, SERVER_ALWAYS, Answer, Asker, PermissionRequest
from acp_agent.permissions.choices import choices
from acp_agent.permissions.errors import AskFailed, UnknownMode
from acp_agent.permissions.events import (
    INHERITED,
    USER,
    GrantData,
    GrantEvent,
    ModeData,
    ModeEvent,
    ModeSource,
)
from acp_agent.permissions.modes import FULL, MODES, ModeId, ModeInfo
from acp_agent.permissions.policy import Policy, Refuse, Run, decide
from acp_agent.permissions.rules import CommandRule, Decision, RuleFile, ScopeRule, command_prefix, match
from acp_agent.permissions.settings import SettingsRule, first_match, settings_rules
from acp_agent.sandbox.policy import FULL_ACCESS
from acp_agent.tools.base import ToolCallContext, ToolResult
from acp_agent.tools.pipeline import PreparedCall
from acp_agent.tools.sandboxing import unavailable
from acp_agent.trust.service import TRUST, TrustItem

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

DECISIONS: dict[Answer, Literal["allow", "reject"]] = {
    "allow_always": "allow",
    "reject_always": "reject",
    SERVER_ALWAYS: "allow",
    SCOPE_ALWAYS: "allow",
}


class Permissions:
    """Modes, grants and the approval gate of one composition."""

    def __init__(
        self,
        policy: Policy,
        default_mode: ModeId = "ask",
        *,
        full_access: bool = True,
        rules: RuleFile | None = None,
        settings_home: Callable[[], Path] | None = None,
    ) -> None:
        self.policy = policy
        self.rules = rules
        """The projects' saved command rules (None: none are kept)."""
        self.settings_home = settings_home
        """The home directory whose (and whose projects') Claude Code settings rules count (None:
        none do)."""
        self.modes: tuple[ModeInfo, ...] = MODES if full_access else tuple(m for m in MODES if m.id != FULL)
        """The modes offered: Full access only when the deployment allows it."""
        self.mode_ids = tuple(m.id for m in self.modes)
        self.default_mode = default_mode
        self._askers: list[Asker] = []

    # -- modes ---------------------------------------------------------------------------------

    def mode(self, agent: Agent) -> str:
        """The agent's mode: the last one chosen in its session (a mode no longer offered is
        ignored), else the deployment's default."""
        chosen = self.explicit_mode(agent)
        return chosen if chosen is not None else self.default_mode

    def explicit_mode(self, agent: Agent) -> str | None:
        """The mode chosen in the agent's session (by the user, or inherited), if any."""
        mode = choices(agent.session).mode
        return mode if mode in self.mode_ids else None

    def set_mode(self, agent: Agent, mode_id: str) -> None:
        """The user chose `mode_id` for the agent's session: logged, in force from the next call."""
        if mode_id not in self.mode_ids:
            raise UnknownMode(mode_id, list(self.mode_ids))
        agent.session.append(ModeEvent, ModeData(mode_id=mode_id, source=ModeSource(kind=USER)))

    def inherit(self, parent: Agent) -> Callable[[Agent], None] | None:
        """A child of `parent` starts in the parent's explicit mode, as it is now (never the
        deployment's default, never a grant): what to install in the child's setup window."""
        mode = self.explicit_mode(parent)
        if mode is None:
            return None
        source = ModeSource(kind=INHERITED, session=parent.id)

        def install(child: Agent) -> None:
            child.session.append(ModeEvent, ModeData(mode_id=mode, source=source))

        return install

    # -- asking --------------------------------------------------------------------------------

    def use_asker(self, asker: Asker) -> Disposer:
        """Ask the user through `asker` (the newest installed one) until the disposer runs."""
        self._askers.append(asker)
        return lambda: self._askers.remove(asker) if asker in self._askers else None

    def grants(self, agent: Agent) -> dict[str, Literal["allow", "reject"]]:
        """The "always" answers in force for the agent: those of its thread's top-level session."""
        return choices(agent.ctx.get(AGENTS).top_level(agent).session).grants

    async def gate(self, call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
        """None lets the call run; a result answers it instead (it did not run)."""
        return await self.decide_call(call, context)

    async def decide_call(
        self, call: PreparedCall, context: ToolCallContext, hook: Literal["allow", "ask"] | None = None
    ) -> ToolResult | None:
        """`gate`, with a hook's word on the call (`acp_agent.hooks`): `allow` counts as the
        user's standing allow (unasked, still inside the sandbox: an escalation still asks);
        `ask` asks the user even where the mode, grants and rules would not."""
        tool = call.tool
        assert tool is not None and call.params is not None  # the pipeline asks for valid calls only
        agent = calling_agent(context)
        root = agent.ctx.get(AGENTS).top_level(agent)
        ruled = await self.settings_rule(call, context)
        if ruled is not None:
            if ruled.decision == "deny":
                return ToolResult.failure(texts.settings_denied(ruled.text, str(ruled.source)), "declined")
            hook = "ask" if "ask" in (hook, ruled.decision) else "allow"  # ask beats allow
        if not tool.needs_approval:
            if hook != "ask":
                return None
            return await self._ask(agent, root, PermissionRequest(agent.id, agent.route, call, context))
        chosen = choices(root.session)
        grant = chosen.grants.get(tool.name)
        if grant is None and tool.server is not None:
            grant = chosen.server_grants.get(tool.server)
        scope = _scope_rule(call)
        if grant is None and scope is not None:
            grant = chosen.scope_grants.get(scope)
        if grant is None and scope is not None and self.rules is not None:
            if scope in self.rules.scope_rules(project_root(context.cwd)):
                grant = "allow"  # saved for the project: as the thread's "always" answer
        command = tool.command(call.params)
        escalate = tool.escalation(call.params) is not None
        prefix = None
        if command is not None and self.rules is not None:
            saved = match(self.rules.rules(project_root(context.cwd)), command)
            if saved is not None and saved.decision == "deny":  # a saved deny wins over every allow
                return ToolResult.failure(texts.rule_denied(saved.prefix), "declined")
            if saved is not None and grant is None:
                grant = "allow"  # unasked, and still inside the sandbox
            prefix = None if escalate or saved is not None else command_prefix(command)
        if hook == "allow" and grant is None:
            grant = "allow"  # as a saved allow: unasked, still inside the sandbox
        verdict = decide(
            tool=tool.name,
            edits_files=tool.edits_files,
            mode=self.mode(agent),
            grant=grant,
            rule=self.policy.rule(tool.name),
            runs_commands=tool.runs_commands,
            escalate=escalate,
            only_reads=tool.only_reads,
        )
        if isinstance(verdict, Refuse):
            return ToolResult.failure(verdict.message, verdict.code)
        if verdict.sandbox is not None and verdict.sandbox != FULL_ACCESS:
            # Fail closed before anyone is asked: a confined command with no sandbox cannot run.
            why = unavailable(agent.ctx)
            if why is not None:
                return ToolResult.failure(why, "sandbox_unavailable")
        context.sandbox = verdict.sandbox
        if isinstance(verdict, Run) and hook != "ask":
            return None
        escalation = not isinstance(verdict, Run) and verdict.escalation
        request = PermissionRequest(agent.id, agent.route, call, context, escalation, prefix)
        return await self._ask(agent, root, request)

    def settings_rules(self, agent: Agent) -> list[SettingsRule]:
        """The Claude Code settings rules of the agent's session (the user's and its project's)."""
        if self.settings_home is None:
            return []
        return settings_rules(Path(agent.session.cwd) if agent.session.cwd else None, self.settings_home())

    def trust_items(self, agent: Agent) -> list[TrustItem]:
        """The project's settings files with allow rules, for the trust question (they widen what
        runs unasked)."""
        allowed: dict[Path, list[str]] = {}
        for rule in self.settings_rules(agent):
            if rule.decision == "allow" and rule.project is not None:
                allowed.setdefault(rule.source, []).append(f"allow {rule.text}")
        return [TrustItem(path, tuple(lines)) for path, lines in allowed.items()]

    async def settings_rule(self, call: PreparedCall, context: ToolCallContext) -> SettingsRule | None:
        """The settings rule that decides `call` (`settings.first_match`); a project's allow rules
        only once the project is trusted."""
        agent = calling_agent(context)
        rules = self.settings_rules(agent)
        if not rules:
            return None
        tool, params = call.tool, call.params
        assert tool is not None and params is not None
        if any(rule.decision == "allow" and rule.project is not None for rule in rules):
            trust = agent.ctx.find(TRUST)
            if trust is None or not await trust.trusted(agent):
                rules = [rule for rule in rules if rule.decision != "allow" or rule.project is None]
        assert self.settings_home is not None  # rules came from it
        arguments = params.model_dump(mode="json")
        return first_match(rules, call.block.name, arguments, tool.command(params), context.cwd, self.settings_home())

    async def _ask(self, agent: Agent, root: Agent, request: PermissionRequest) -> ToolResult | None:
        call = request.call
        name = call.block.name
        if not self._askers:
            return ToolResult.failure(texts.no_asker(name), "approval_unavailable")
        try:
            answer = await self._askers[-1].ask(request)
        except AskFailed as exc:
            return ToolResult.failure(texts.ask_failed(name, str(exc)), "approval_unavailable")
        if answer == "cancelled":
            # The prompt turn was cancelled: stop it. Cancelling the top-level turn reaches every
            # child through its delegating call, each ending with its usual reason.
            (root if root.busy else agent).cancel(texts.CANCELLED)
            await anyio.sleep_forever()
        if answer in ("allow_prefix", "reject_prefix") and self.rules is not None and request.prefix is not None:
            decided: Decision = "allow" if answer == "allow_prefix" else "deny"
            self.rules.add(project_root(request.context.cwd), CommandRule(decided, request.prefix))
        granted = _scope_rule(call) if answer == SCOPE_ALWAYS else None
        if granted is not None and self.rules is not None:  # saved for the project, as a command rule is
            self.rules.add(project_root(request.context.cwd), granted)
            return None
        decision = DECISIONS.get(answer)
        if decision is not None:
            route = agent.route if agent is not root else None
            server = call.tool.server if answer == SERVER_ALWAYS and call.tool is not None else None
            scope = granted.scope if granted is not None else None  # no rule file: for the thread
            grant = GrantData(
                tool=name, decision=decision, route=route, call_id=call.block.id, server=server, scope=scope
            )
            root.session.append(GrantEvent, grant)
        return None if answer.startswith("allow") else ToolResult.failure(texts.declined(name), "declined")


def _scope_rule(call: PreparedCall) -> ScopeRule | None:
    """The rule an "always allow" of `call`'s grant scope saves (None: the call has no scope)."""
    tool, params = call.tool, call.params
    assert tool is not None and params is not None  # the pipeline asks for valid calls only
    scope = tool.grant_scope(params)
    return ScopeRule(tool.name, scope.key) if scope is not None else None


PERMISSIONS: Final = ServiceKey[Permissions]("permissions")
"""`ctx.get(PERMISSIONS)`: Session modes, grants and the approval gate (a composition may leave it out)."""
