"""Small builders of valid session logs, and plugin event types, shared by the session tests."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from acp_agent.kernel.models import Model
from acp_agent.session import (
    AssistantChunkData,
    AssistantMessageData,
    EventRegistry,
    Finish,
    FinishReason,
    Session,
    SessionEvent,
    SessionHeader,
    Source,
    StepData,
    TextBlock,
    TextContent,
    TextDelta,
    ToolCallBlock,
    ToolCallData,
    ToolResultData,
    Trigger,
    TurnCompleted,
    TurnEndData,
    TurnEndReason,
    TurnStartData,
    UserMessageData,
    default_registry,
)
from acp_agent.session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)


class RetryData(Model):
    attempt: int


class RetryEvent(SessionEvent):
    """A plugin type that must occur inside a turn."""

    type: Literal["llm/retry"] = "llm/retry"
    data: RetryData


class TitleData(Model):
    title: str


class TitleEvent(SessionEvent):
    """A plugin type allowed anywhere."""

    type: Literal["note/label"] = "note/label"
    data: TitleData


def counter_clock(start: int = 1000) -> Callable[[], int]:
    ticks = itertools.count(start)
    return lambda: next(ticks)


def new_session(
    *,
    session_id: str = "s-1",
    seed: Sequence[SessionEvent] = (),
    registry: EventRegistry | None = None,
) -> Session:
    header = SessionHeader(id=session_id, created_at=1, cwd="/work")
    return Session(header, registry=registry or default_registry(), seed=seed, clock=counter_clock())


def start_turn(session: Session, text: str = "hi") -> int:
    turn = session.next_turn
    session.append(TurnStartEvent, TurnStartData(turn=turn, trigger=Trigger(kind="message", source={"kind": "user"})))
    session.append(UserMessageEvent, UserMessageData(content=[TextContent(text=text)], source=Source(kind="user")))
    return turn


def open_step(session: Session, turn: int, step: int, *, calls: Sequence[str] = (), chunks: int = 1) -> None:
    """A step up to its tool calls, which stay pending."""
    session.append(StepStartEvent, StepData(turn=turn, step=step))
    for _ in range(chunks):
        session.append(
            AssistantChunkEvent, AssistantChunkData(turn=turn, step=step, chunk=TextDelta(index=0, text="x"))
        )
    finish = FinishReason(kind="tool-calls" if calls else "stop")
    session.append(AssistantChunkEvent, AssistantChunkData(turn=turn, step=step, chunk=Finish(reason=finish)))
    blocks = [ToolCallBlock(id=call_id, name="bash", arguments="{}") for call_id in calls]
    content = [TextBlock(text="x" * chunks), *blocks]
    session.append(AssistantMessageEvent, AssistantMessageData(turn=turn, step=step, content=content))
    for call_id in calls:
        session.append(ToolCallEvent, ToolCallData(turn=turn, step=step, call_id=call_id, name="bash", arguments="{}"))


def close_step(session: Session, turn: int, step: int, *, calls: Sequence[str] = ()) -> None:
    for call_id in calls:
        result = ToolResultData(turn=turn, step=step, call_id=call_id, content=[TextContent(text="ok")], is_error=False)
        session.append(ToolResultEvent, result)
    session.append(StepEndEvent, StepData(turn=turn, step=step))


def end_turn(session: Session, turn: int, reason: TurnEndReason | None = None) -> None:
    session.append(TurnEndEvent, TurnEndData(turn=turn, reason=reason or TurnCompleted()))


def complete_turn(session: Session, *, calls: Sequence[str] = ()) -> int:
    """A whole turn: one step (with `calls` answered) and, if there were calls, a second one."""
    turn = start_turn(session)
    open_step(session, turn, 1, calls=calls)
    close_step(session, turn, 1, calls=calls)
    if calls:
        open_step(session, turn, 2)
        close_step(session, turn, 2)
    end_turn(session, turn)
    return turn


def jsonl(session: Session) -> list[str]:
    """The lines a store writes for `session`."""
    return [
        model.model_dump_json(by_alias=True, exclude_none=True) for model in (session.header, *session.all_events())
    ]


def write_lines(path: Path, lines: Sequence[str], *, tail: str = "\n") -> Path:
    path.write_text("\n".join(lines) + tail, encoding="utf-8")
    return path


def held(events: Sequence[SessionEvent]) -> list[dict[str, object]]:
    """What a load keeps in memory of a log (dumped): every event but the chunks of the steps
    that logged their `assistant/message`."""
    stated = {(e.data.turn, e.data.step) for e in events if e.type == "assistant/message"}
    return [e.dump() for e in events if e.type != "assistant/chunk" or (e.data.turn, e.data.step) not in stated]


def read_json_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
