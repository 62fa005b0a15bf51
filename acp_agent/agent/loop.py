"""The agent loop: a turn is steps until no tool call owes the model an answer.

turn/start -> user/message -> (step/start -> model stream, every chunk logged -> assistant/message
-> tool/call ... tool/result -> step/end)* -> turn/end. Whatever ends a turn (completion, cancel,
error, disposal), the log is closed cleanly: open steps end, owed tool calls get error results.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import anyio

from acp_agent.agent.keys import COMPACTION, TURN_HOOKS
from acp_agent.agent.step import Step
from acp_agent.kernel.events import EventKey
from acp_agent.llm.codes import CONTEXT_OVERFLOW
from acp_agent.llm.errors import LlmError
from acp_agent.session.content import ContentBlock, TextContent, ToolCallBlock
from acp_agent.session.events import (
    STEER_SOURCE,
    CompactionTrigger,
    Source,
    ToolCallData,
    ToolCallEvent,
    ToolError,
    Trigger,
    TurnAborted,
    TurnCompleted,
    TurnDisposed,
    TurnEndData,
    TurnEndEvent,
    TurnEndReason,
    TurnFailed,
    TurnMaxSteps,
    TurnMaxTokens,
    TurnStartData,
    TurnStartEvent,
    UserMessageData,
    UserMessageEvent,
)
from acp_agent.session.log import closing_events, now_ms
from acp_agent.tools import texts as tool_texts
from acp_agent.tools.base import BEFORE_MODEL_CALL, ToolCallContext, ToolResult
from acp_agent.tools.pipeline import PreparedCall, prepare, run_prepared
from acp_agent.tools.registry import TOOLS

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket

log = logging.getLogger(__name__)


class Compaction(Protocol):
    """What the loop asks of context compaction (`ctx.find(COMPACTION)`, provided by the
    compaction plugin; without it a turn never compacts)."""

    async def before_call(self, agent: Agent) -> None:
        """Compact when the history is due for it, before the turn's next model call."""

    def possible(self, agent: Agent) -> bool:
        """Whether the open turn's history holds anything to compact."""

    async def compact(self, agent: Agent, trigger: CompactionTrigger, focus: str | None = None) -> None:
        """Summarize the history before the open turn (which `possible` said it can)."""


StepsRun = Callable[[], Awaitable[TurnEndReason]]


class TurnHooks(Protocol):
    """What the loop asks of hooks around a model turn's steps (`ctx.find(TURN_HOOKS)`, provided
    by the hooks plugin; without it the steps simply run)."""

    async def around_steps(self, agent: Agent, turn: int, run: StepsRun) -> TurnEndReason:
        """Run the turn's steps with `run` (none, once, or again after it returned: each call
        runs steps until the model owes nothing), logging what comes before and between; the
        turn's ending."""


@dataclass
class TurnProgress:
    """What a turn has opened and not yet closed, so any ending can close it (`close_step`)."""

    turn: int
    step: Step | None = None
    """The open step."""
    repeats: dict[tuple[str, str], int] = field(default_factory=dict)
    """The calls (tool name, canonical arguments) of the last step that made any, each with the
    number of consecutive steps in a row that made it (`repeated_calls`)."""

    def close_step(self, code: str, why: str) -> None:
        """Close the open step, if any (`Step.close`).

        A model turn ends abnormally only while a step is open (between two steps nothing awaits); a
        turn body (`TurnBody`) may end outside any step, and then there is nothing to close.
        """
        if self.step is not None:
            self.step.close(code, why)
            self.step = None


@dataclass(eq=False)
class TurnControl:
    """A running turn as its agent holds it: the cancel scope `Agent.cancel` cancels, and the
    steering messages that join the turn at its next step (the loop logs and drains them). The
    agent owns both; the loop only runs inside the scope."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    steering: list[Sequence[ContentBlock]] = field(default_factory=list)


TURN_ENDED: Final[EventKey[Callable[[Agent, TurnEndReason], Awaitable[object]]]] = EventKey("agent/turn-ended")
"""Awaited (`parallel`) with the agent and the turn's end reason once the turn ended and its
outcome was reported (a held ticket released), before the next queued turn starts; cancelled
with the agent's loop (`dispose`)."""
TURN_STARTING: Final[EventKey[Callable[[Agent], object]]] = EventKey("agent/turn-starting")
"""Emitted with the agent right before each turn's `turn/start` (synchronous listeners): what a
turn reads afresh (the project instructions) is read and logged here, ahead of the turn."""


async def run_turn(agent: Agent, ticket: Ticket, control: TurnControl) -> TurnEndReason:
    """Run `ticket`'s turn inside `control.scope`; its ending, as logged by `turn/end`. What
    raises from here (its log could not be written, a subscriber failed as the turn was closed)
    leaves the turn open in memory, as it stands on disk: the agent's next turn ends it first
    (`end_left_open`)."""
    session = agent.session
    if session.open_turn is not None:
        end_left_open(agent)
    agent.ctx.events.emit(TURN_STARTING, agent)
    progress = TurnProgress(session.next_turn)
    source = {"kind": ticket.source}
    session.append(TurnStartEvent, TurnStartData(turn=progress.turn, trigger=Trigger(kind="message", source=source)))
    if ticket.content:  # a turn woken by a background child's notice has no message of its own
        session.append(
            UserMessageEvent, UserMessageData(content=list(ticket.content), source=Source(kind=ticket.source))
        )
    scope = control.scope
    reason: TurnEndReason | None = None
    try:
        with scope:
            if not scope.cancel_called:  # a cancel that came while the message was queued
                if ticket.body is not None:
                    reason = await ticket.body(agent, progress.turn)
                else:
                    reason = await _hooked_steps(agent, progress, control.steering)
    except anyio.get_cancelled_exc_class():
        # Not our turn scope: the agent is being disposed (or the process is stopping).
        try:
            progress.close_step("disposed", "the agent was disposed before this call finished")
            session.append(TurnEndEvent, TurnEndData(turn=progress.turn, reason=TurnDisposed()))
        except Exception as exc:  # the cancellation goes on; a load closes the turn as interrupted
            log.warning("session %s: the disposed turn's end could not be logged: %s", session.id, exc)
        raise
    except Exception as exc:
        reason = _failure(exc, None if progress.step is None else progress.step.number)
        progress.close_step("failed", "the turn failed before this call finished")
    if reason is None:  # our scope caught the cancellation
        progress.close_step("cancelled", "the turn was cancelled before this call finished")
        reason = TurnAborted(reason=ticket.cancel_reason)
    session.append(TurnEndEvent, TurnEndData(turn=progress.turn, reason=reason))
    return reason


LEFT_OPEN_CALL = "the turn ended before this call finished, and its end could not be logged then"


def end_left_open(agent: Agent) -> None:
    """Log the end of the turn a failure left open (see `run_turn`): error results for the calls
    it owes, its step's end, its `turn/end` with the failure (`Agent.left_open`). Raises as the
    turn did while the log still cannot be written; then the next turn tries again."""
    session = agent.session
    reason = agent.left_open or TurnFailed(message="the turn's end was not logged")
    error = ToolError(code="failed", message=LEFT_OPEN_CALL)
    for event in closing_events(session.state, now_ms(), error, reason):
        session.append_event(event)
    agent.left_open = None


def failed_turn(exc: Exception) -> TurnFailed:
    """The ending of a turn that `run_turn` could not end itself: what failed, named."""
    return TurnFailed(message=_described(exc))


def _failure(exc: Exception, step: int | None) -> TurnFailed:
    """The failed ending for any exception: a `code` that is not a string (a JSON-RPC error's int)
    is logged as its text, so building the ending can never raise in its turn's handler."""
    code = getattr(exc, "code", None)
    return TurnFailed(step=step, message=_described(exc), code=None if code is None else str(code))


def _described(exc: Exception) -> str:
    """What failed, as a turn's ending says it: an exception's message, after its type's name
    for a built-in one (`KeyError: 'x'`, not `'x'`), whose message alone seldom says what failed;
    the one exception of a task group's group (a tool call's task) as itself."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    message = str(exc)
    if type(exc).__module__ == "builtins":
        return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return message or type(exc).__name__


async def _hooked_steps(agent: Agent, progress: TurnProgress, steering: list[Sequence[ContentBlock]]) -> TurnEndReason:
    hooks = agent.ctx.find(TURN_HOOKS)

    def run() -> Awaitable[TurnEndReason]:
        return _run_steps(agent, progress, steering)

    return await (run() if hooks is None else hooks.around_steps(agent, progress.turn, run))


async def _run_steps(agent: Agent, progress: TurnProgress, steering: list[Sequence[ContentBlock]]) -> TurnEndReason:
    compaction = agent.ctx.find(COMPACTION)
    for _ in range(agent.options.max_steps):  # compaction steps are not counted
        if compaction is not None:
            await compaction.before_call(agent)
        try:
            reason = await _run_step(agent, progress, steering)
        except LlmError as exc:
            if exc.code != CONTEXT_OVERFLOW or compaction is None or not compaction.possible(agent):
                raise
            progress.close_step("failed", "the call did not fit the context window")
            await compaction.compact(agent, "overflow")
            reason = await _run_step(agent, progress, steering)  # a second overflow fails the turn
        if reason is not None:
            return reason
    return TurnMaxSteps()


async def _run_step(
    agent: Agent, progress: TurnProgress, steering: list[Sequence[ContentBlock]]
) -> TurnEndReason | None:
    """One model call and the tool calls it asks for; a reason when the turn ends here."""
    session = agent.session
    for content in steering:
        session.append(UserMessageEvent, UserMessageData(content=list(content), source=Source(kind=STEER_SOURCE)))
    steering.clear()
    step = progress.step = Step.open(agent, progress.turn)
    await agent.ctx.events.parallel(BEFORE_MODEL_CALL, agent)
    finish = await step.call_model(agent.conversation.messages())
    calls = [block for block in step.assembler.blocks() if isinstance(block, ToolCallBlock)]
    ending: TurnEndReason | None = None
    if finish.kind == "max-tokens":
        ending = TurnMaxTokens()
    elif finish.kind == "aborted":
        ending = TurnAborted(reason=finish.message)
    elif not calls:
        ending = TurnCompleted()
    if ending is None and await _run_tools(progress, step, calls):
        ending = TurnCompleted()
    step.end()
    progress.step = None
    return ending


async def _run_tools(progress: TurnProgress, step: Step, calls: list[ToolCallBlock]) -> bool:
    """Run the step's calls, logging each result; whether a result ended the turn."""
    agent = step.agent
    session, turn = agent.session, step.turn
    repeated = step.assembler.repeated
    prepared = [
        _repeated(call, repeated[call.id]) if call.id in repeated else prepare(call, agent.ctx.get(TOOLS), agent.scope)
        for call in calls
    ]
    for call in calls:
        session.append(
            ToolCallEvent,
            ToolCallData(turn=turn, step=step.number, call_id=call.id, name=call.name, arguments=call.arguments),
        )
    cwd = Path(session.cwd or ".")

    def context(call_id: str) -> ToolCallContext:
        return ToolCallContext(call_id=call_id, cwd=cwd, agent=agent)

    counts = repeated_calls(progress, calls)

    def log(index: int, result: ToolResult) -> None:
        note = tool_texts.repeated_call(counts[index])
        if note is not None:
            result = result.model_copy(update={"content": [*result.content, TextContent(text=note)]})
        step.log_result(calls[index].id, result)

    results = await run_prepared(prepared, context, on_result=log, gate=agent.ctx.get(TOOLS).gates(agent.scope))
    return any(result.ends_turn and not result.is_error for result in results)


def _repeated(call: ToolCallBlock, given: str) -> PreparedCall:
    """A call that repeated the id of an earlier call of its message (renamed `call.id` by the
    assembler): answered with an error the model can act on, never run."""
    message = f"another call of the same answer has the id '{given}': this call did not run; call it again"
    return PreparedCall(call, None, None, ToolResult.failure(message, "repeated_call_id"))


def repeated_calls(progress: TurnProgress, calls: list[ToolCallBlock]) -> list[int]:
    """For each call of this step, in how many consecutive steps of the turn, this one included,
    the same tool was called with the same arguments; remembered for the next step."""
    keys = [(call.name, _canonical(call.arguments)) for call in calls]
    counts = [progress.repeats.get(key, 0) + 1 for key in keys]
    progress.repeats = dict(zip(keys, counts, strict=True))
    return counts


def _canonical(arguments: str) -> str:
    """Arguments as compared: the same JSON whatever its spacing or key order."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):  # not JSON, or nested past the parser (refused anyway)
        return arguments
