"""`Conversation`: the model's messages kept as the log grows are the messages derived from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.kernel.models import Model
from acp_agent.llm.conversation import Conversation
from acp_agent.llm.request import Messages, derive_messages
from acp_agent.session import Session, SessionHeader, default_registry
from acp_agent.session.content import TextBlock, TextContent, TextDelta, ToolCallBlock
from acp_agent.session.events import (
    AssistantChunkData,
    AssistantChunkEvent,
    AssistantMessageData,
    AssistantMessageEvent,
    EventOf,
    Source,
    StepData,
    StepEndEvent,
    StepStartEvent,
    ToolCallData,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    Trigger,
    TurnCompleted,
    TurnEndData,
    TurnEndEvent,
    TurnStartData,
    TurnStartEvent,
    UserMessageData,
    UserMessageEvent,
)

SOURCES = st.sampled_from(["user", "steer", "command", "plugin"])
STEP = st.tuples(st.text(max_size=3), st.lists(st.booleans(), max_size=2))
"""A model call: its text (empty: a message with no content) and its tool calls (is each an error)."""
TURN = st.tuples(SOURCES, st.text(max_size=3), st.lists(STEP, min_size=1, max_size=3))

D = TypeVar("D", bound=Model)


Turn = tuple[str, str, list[tuple[str, list[bool]]]]


def session(seed: list[Turn]) -> Session:
    """A session seeded with the events of `seed` (as a loaded one is)."""
    made = Session(SessionHeader(id="s", created_at=0), registry=default_registry())
    for turn in seed:
        play(made, turn)
    return Session(made.header, registry=default_registry(), seed=made.events)


def play(session: Session, turn: Turn, check: Callable[[], None] | None = None) -> None:
    """Log one turn, calling `check` after every event."""
    source, text, steps = turn
    number = session.next_turn

    def add(event_cls: type[EventOf[D]], data: D) -> None:
        session.append(event_cls, data)
        if check is not None:
            check()

    add(TurnStartEvent, TurnStartData(turn=number, trigger=Trigger(kind="message")))
    add(UserMessageEvent, UserMessageData(content=[TextContent(text=text)], source=Source(kind=source)))
    for step, (said, calls) in enumerate(steps, start=1):
        add(StepStartEvent, StepData(turn=number, step=step))
        add(AssistantChunkEvent, AssistantChunkData(turn=number, step=step, chunk=TextDelta(index=0, text=said)))
        blocks = [TextBlock(text=said)] if said else []
        blocks += [ToolCallBlock(id=f"c{i}", name="t", arguments="{}") for i in range(len(calls))]
        add(AssistantMessageEvent, AssistantMessageData(turn=number, step=step, content=blocks))
        for i in range(len(calls)):
            add(ToolCallEvent, ToolCallData(turn=number, step=step, call_id=f"c{i}", name="t", arguments="{}"))
        for i, failed in enumerate(calls):
            result = ToolResultData(
                turn=number, step=step, call_id=f"c{i}", content=[TextContent(text="r")], is_error=failed
            )
            add(ToolResultEvent, result)
        add(StepEndEvent, StepData(turn=number, step=step))
    add(TurnEndEvent, TurnEndData(turn=number, reason=TurnCompleted()))


@settings(max_examples=30, deadline=None)
@given(seed=st.lists(TURN, max_size=2), turns=st.lists(TURN, min_size=1, max_size=3))
def test_after_every_append_the_kept_messages_are_the_messages_derived_anew(
    seed: list[Turn], turns: list[Turn]
) -> None:
    log = session(seed)
    conversation = Conversation(log)
    stop = conversation.follow()
    assert conversation.messages() == derive_messages(log.events)  # a seeded (or loaded) log's history
    earlier = conversation.messages()
    assert type(earlier) is Messages  # what a request takes without a look at each message
    kept = list(earlier)

    def check() -> None:
        assert conversation.messages() == derive_messages(log.events)

    for turn in turns:
        play(log, turn, check)
    assert earlier == kept  # what a request took is its own: later appends leave it as it was
    stop()
    log.append(TurnStartEvent, TurnStartData(turn=log.next_turn, trigger=Trigger(kind="message")))
    log.append(UserMessageEvent, UserMessageData(content=[TextContent(text="late")], source=Source(kind="user")))
    assert conversation.messages() != derive_messages(log.events)  # it follows no more once stopped
