"""`ctx.get(HOOKS)`: each session's hooks, and what they do to its turns and tool calls.

A top-level session's hooks are read when its agent is published (a new, loaded or resumed
session); its children run them too. Every run is logged as `hook/run` in the session of the agent
it ran for. The effects:

- PreToolUse (the tool pipeline's gate): deny fails the call with the reason, nothing runs;
  `updatedInput` replaces the arguments; `ask` asks the user whatever the mode; `allow` runs the
  call without asking; otherwise the permission decision rules as usual. The gate then runs the
  call itself, so that PostToolUse sees its result: block puts the reason in the result's place,
  `additionalContext` follows the result, `continue: false` ends the turn after it.
- Around a model turn (`TurnHooks`): SessionStart (SubagentStart for a child) before its first
  turn, UserPromptSubmit before the steps of a user's prompt (block: no model call, the user is
  told the reason), Stop (SubagentStop) after them (block: the reason is the next step's input,
  at most `STOP_LIMIT` times in a row). Contexts are model-visible `user/message`s of source
  `hook`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary, WeakSet

import anyio
from pydantic import ValidationError

from acp_agent.agent.calling import calling_agent
from acp_agent.agent.keys import AGENTS
from acp_agent.commands.builtins import answer
from acp_agent.commands.events import CommandReplyData, CommandReplyEvent, NoticeSeverity
from acp_agent.commands.registry import COMMANDS, Command, Invocation
from acp_agent.config_dir import config_dir
from acp_agent.environ.variables import child_environment
from acp_agent.hooks import texts
from acp_agent.hooks.config import HookEvent, HookHandler, HookSet, hook_sources, load_hooks
from acp_agent.hooks.events import HookRunData, HookRunEvent
from acp_agent.hooks.matchers import from_hook_input, hook_input, tool_names
from acp_agent.hooks.output import Verdict, combine_verdicts, verdict_of
from acp_agent.hooks.runner import run_hook
from acp_agent.kernel.context import Context, ServiceKey
from acp_agent.kernel.scope import Scope
from acp_agent.permissions.service import PERMISSIONS
from acp_agent.processes.registry import PROCESSES
from acp_agent.session.content import TextContent
from acp_agent.session.events import (
    USER_SOURCES,
    Source,
    TurnCompleted,
    TurnEndReason,
    UserMessageData,
    UserMessageEvent,
)
from acp_agent.session.persistence import SESSIONS
from acp_agent.tools.base import ToolCallContext, ToolResult
from acp_agent.tools.pipeline import PreparedCall
from acp_agent.trust.service import TRUST, TrustItem

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket
    from acp_agent.agent.loop import StepsRun

HOOK_SOURCE: Final = "hook"
"""The source of the `user/message`s that carry hooks' words to the model."""
EMPTY: Final = HookSet()


class Hooks:
    """The hooks of every session of one composition."""

    def __init__(
        self,
        ctx: Context,
        config: Callable[[], Path] = config_dir,
        home: Callable[[], Path] = Path.home,
    ) -> None:
        self._ctx = ctx
        self._commands = ctx.find(COMMANDS)
        self._config = config
        self._home = home
        self._sets: WeakKeyDictionary[Scope, tuple[HookSet, str]] = WeakKeyDictionary()
        """Per top-level agent: its hooks, and how its session started (`startup` or `resume`)."""
        self._started: WeakSet[Scope] = WeakSet()
        """The agents whose SessionStart (SubagentStart) hooks ran."""

    # -- which hooks -----------------------------------------------------------------------------

    def published(self, agent: Agent) -> None:
        """Read a top-level session's hooks as it starts (a child runs its thread's)."""
        if agent.session.header.parent_session is not None:
            return
        cwd = Path(agent.session.cwd) if agent.session.cwd else None
        found = load_hooks(hook_sources(cwd, self._home(), self._config()))
        resumed = any(isinstance(event, UserMessageEvent) for event in agent.session.events)
        self._sets[agent.scope] = (found, "resume" if resumed else "startup")
        if self._commands is not None and (found.handlers or found.warnings):
            self._commands.add(Command("hooks", texts.HOOKS_DESCRIPTION, self._list), owner=agent.scope)

    def _list(self, invocation: Invocation) -> Ticket:
        return answer(invocation, self.listing(invocation.agent))

    def hook_set(self, agent: Agent) -> HookSet:
        """The hooks `agent`'s thread has read (the project's included, trusted or not)."""
        found = self._sets.get(self._top(agent).scope)
        return EMPTY if found is None else found[0]

    async def active(self, agent: Agent) -> HookSet:
        """The hooks `agent` runs: its thread's, the project's only once the project is trusted
        (waits for the user's answer; none without a trust service)."""
        hooks = self.hook_set(agent)
        if not any(source.project is not None for source in hooks.sources):
            return hooks
        trust = self._ctx.find(TRUST)
        return hooks if trust is not None and await trust.trusted(agent) else hooks.users_only()

    def trust_items(self, agent: Agent) -> list[TrustItem]:
        """The project's hook files, with their commands, for the trust question."""
        hooks = self.hook_set(agent)
        return [
            TrustItem(source.path, tuple(f"{h.event}: {h.command}" for h in hooks.handlers if h.source is source))
            for source in hooks.sources
            if source.project is not None
        ]

    def listing(self, agent: Agent) -> str:
        """What `/hooks` answers: each active hook, by event, with its matcher and file."""
        hooks = self.hook_set(agent)
        lines = [
            f"- {h.event}{f' [{h.matcher.text}]' if h.matcher.text else ''}: `{h.command}` "
            f"({h.source.path}, {h.timeout:g} s)"
            for h in hooks.handlers
        ]
        lines += [f"- warning: {warning}" for warning in hooks.warnings]
        return "\n".join(lines)

    def _top(self, agent: Agent) -> Agent:
        return agent.ctx.get(AGENTS).top_level(agent)

    # -- running ---------------------------------------------------------------------------------

    async def run(self, agent: Agent, handlers: list[HookHandler], extra: dict[str, Any]) -> Verdict:
        """Run `handlers` (of one event) at once, each with the event's input; their verdict."""
        if not handlers:
            return Verdict()
        event = handlers[0].event
        payload = json.dumps({**self._common(agent, event), **extra}).encode()
        verdicts: list[Verdict | None] = [None] * len(handlers)

        async def one(index: int, handler: HookHandler) -> None:
            verdicts[index] = await self._run_one(agent, handler, payload)

        async with anyio.create_task_group() as tg:
            for index, handler in enumerate(handlers):
                tg.start_soon(one, index, handler)
        return combine_verdicts([v for v in verdicts if v is not None])

    async def _run_one(self, agent: Agent, handler: HookHandler, payload: bytes) -> Verdict:
        cwd = Path(agent.session.cwd or ".")
        env = child_environment(agent.ctx)
        env["CLAUDE_PROJECT_DIR"] = str(handler.source.project or cwd)
        group = agent.ctx.get(PROCESSES).group(agent.scope) if agent.ctx.has(PROCESSES) else None
        started = time.monotonic()
        ran = await run_hook(handler.command, payload, cwd=cwd, env=env, timeout=handler.timeout, group=group)
        verdict = verdict_of(handler.event, ran, handler.timeout)
        data = HookRunData(
            event=handler.event,
            source=str(handler.source.path),
            command=handler.command,
            exit_code=ran.exit_code,
            decision=verdict.decision,
            duration_ms=round((time.monotonic() - started) * 1000),
            error=verdict.error,
            updated_input=verdict.updated_input,
        )
        agent.session.append(HookRunEvent, data, ignorable=True)
        return verdict

    def _common(self, agent: Agent, event: HookEvent) -> dict[str, Any]:
        """The fields every event's input has."""
        sessions = agent.ctx.find(SESSIONS)
        permissions = agent.ctx.find(PERMISSIONS)
        return {
            "session_id": agent.id,
            "transcript_path": str(sessions.path_of(agent.id)) if sessions is not None else None,
            "cwd": agent.session.cwd,
            "hook_event_name": event,
            "permission_mode": permissions.mode(agent) if permissions is not None else None,
        }

    # -- tool calls ------------------------------------------------------------------------------

    async def gate(self, call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
        """The PreToolUse and PostToolUse hooks of a call (see the module); None when it has none."""
        agent, tool, params = calling_agent(context), call.tool, call.params
        assert tool is not None and params is not None  # the pipeline asks for valid calls only
        names = tool_names(call.block.name)
        hooks = await self.active(agent)
        pre, post = hooks.select("PreToolUse", names), hooks.select("PostToolUse", names)
        if not pre and not post:
            return None
        arguments: dict[str, Any] = params.model_dump(mode="json")
        verdict = await self.run(agent, pre, _tool_fields(names[0], hook_input(call.block.name, arguments), call))
        self._tell(agent, verdict.messages)
        if verdict.decision == "deny":
            return ToolResult.failure(texts.denied(call.block.name, verdict.reason), "hook_denied")
        if verdict.updated_input is not None:
            try:
                params = tool.Params.model_validate(
                    {**arguments, **from_hook_input(call.block.name, verdict.updated_input)}
                )
            except ValidationError as exc:
                return ToolResult.failure(texts.bad_input(call.block.name, exc), "hook_invalid_input")
            call = call._replace(params=params)
            arguments = params.model_dump(mode="json")
        refusal = await self._permission(verdict, call, context)
        if refusal is not None:
            return refusal
        result = await tool.run(params, context)
        fields = _tool_fields(names[0], hook_input(call.block.name, arguments), call)
        after = await self.run(agent, post, {**fields, "tool_response": _response(result)})
        self._tell(agent, after.messages)
        if after.decision == "deny":
            result = ToolResult.failure(texts.result_blocked(call.block.name, after.reason), "hook_blocked")
        elif after.contexts:
            notes = [TextContent(text=texts.hook_context("PostToolUse", c)) for c in after.contexts]
            result = result.model_copy(update={"content": [*result.content, *notes]})
        if after.stop is not None:
            self._tell(agent, (texts.turn_stopped(after.stop),), "warning")
            result = result.model_copy(update={"ends_turn": True})
        return result

    async def _permission(self, verdict: Verdict, call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
        """The permission decision after the hooks: theirs when they gave one, else the usual."""
        permissions = self._ctx.find(PERMISSIONS)
        if permissions is None:
            return None
        hook = verdict.decision if verdict.decision in ("allow", "ask") else None
        return await permissions.decide_call(call, context, hook)

    # -- turns -----------------------------------------------------------------------------------

    async def around_steps(self, agent: Agent, turn: int, run: StepsRun) -> TurnEndReason:
        """SessionStart / SubagentStart, UserPromptSubmit, the steps, then Stop / SubagentStop."""
        hooks = await self.active(agent)
        top = self._top(agent) is agent
        prompt = _prompt(agent)
        if agent.scope not in self._started:
            self._started.add(agent.scope)
            if top:
                how = self._sets.get(agent.scope, (EMPTY, "startup"))[1]
                started = await self.run(agent, hooks.select("SessionStart", (how,)), {"source": how})
            else:
                started = await self.run(agent, hooks.select("SubagentStart"), self._child(agent))
            self._add_context(agent, "SessionStart" if top else "SubagentStart", started)
        if top and prompt is not None:
            verdict = await self.run(agent, hooks.select("UserPromptSubmit"), {"prompt": prompt})
            self._tell(agent, verdict.messages)
            if verdict.decision == "deny" or verdict.stop is not None:
                blocked = verdict.stop if verdict.decision != "deny" else verdict.reason
                self._tell(agent, (texts.prompt_blocked(blocked or texts.NO_REASON),), "warning")
                return TurnCompleted()
            self._add_context(agent, "UserPromptSubmit", verdict)
        event: HookEvent = "Stop" if top else "SubagentStop"
        blocks = 0
        while True:
            reason = await run()
            handlers = hooks.select(event)
            if not isinstance(reason, TurnCompleted) or not handlers:
                return reason
            extra: dict[str, Any] = {"stop_hook_active": blocks > 0}
            if not top:
                extra.update(self._child(agent))
            verdict = await self.run(agent, handlers, extra)
            self._tell(agent, verdict.messages)
            if verdict.decision != "deny" or verdict.stop is not None:
                return reason
            if blocks == texts.STOP_LIMIT:
                self._tell(agent, (texts.stop_limit(blocks),), "warning")
                return reason
            blocks += 1
            self._say(agent, verdict.reason)

    def _child(self, agent: Agent) -> dict[str, Any]:
        header = agent.session.header
        return {"agent_id": agent.id, "agent_type": "subagent", "parent_session_id": header.parent_session}

    def _add_context(self, agent: Agent, event: str, verdict: Verdict) -> None:
        for context in verdict.contexts:
            self._say(agent, texts.hook_context(event, context))

    def _say(self, agent: Agent, text: str) -> None:
        """Tell the model `text` (a model-visible `user/message` of source `hook`)."""
        data = UserMessageData(content=[TextContent(text=text)], source=Source(kind=HOOK_SOURCE))
        agent.session.append(UserMessageEvent, data)

    def _tell(self, agent: Agent, messages: tuple[str, ...], severity: NoticeSeverity = "info") -> None:
        """Tell the user `messages` in the open turn: a notice of `severity` to a client that shows
        notices, else the agent's message (`command/reply` events marked as notices)."""
        turn = agent.session.state.open_turn
        assert turn is not None  # hooks run inside a turn: around its steps, or at a call
        for message in messages:
            data = CommandReplyData(turn=turn, text=message, notice=severity)
            agent.session.append(CommandReplyEvent, data, ignorable=True)


def _tool_fields(name: str, arguments: dict[str, Any], call: PreparedCall) -> dict[str, Any]:
    return {"tool_name": name, "tool_input": arguments, "tool_use_id": call.block.id}


def _response(result: ToolResult) -> dict[str, Any]:
    """A result as PostToolUse hooks read it (`tool_response`)."""
    return {"output": result.plain_text(), "is_error": result.is_error}


def _prompt(agent: Agent) -> str | None:
    """The text of the prompt the user sent for the open turn (None: the turn is not a user's)."""
    message = next(e for e in reversed(agent.session.events) if isinstance(e, UserMessageEvent))
    if message.data.source.kind not in USER_SOURCES:
        return None
    return "\n".join(block.text for block in message.data.content if isinstance(block, TextContent))


HOOKS: Final = ServiceKey[Hooks]("hooks")
"""`ctx.get(HOOKS)`: the hooks of each session."""
