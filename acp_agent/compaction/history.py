"""What a compaction works from, read off the log: how full the context is, what to summarize,
which user messages to keep. Pure functions of the events."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from acp_agent.llm.request import UNSEEN_SOURCES, Message, UserMessage, derive_messages
from acp_agent.session.content import (
    AssistantBlock,
    ContentBlock,
    ImageContent,
    ReasoningBlock,
    TextBlock,
    TextContent,
    ToolCallBlock,
)
from acp_agent.session.events import (
    AssistantMessageEvent,
    CompactionEvent,
    SessionEvent,
    ToolResultEvent,
    TurnStartEvent,
    UserMessageEvent,
)

CHARS_PER_TOKEN = 4
"""The estimate's rule of thumb: one token per 4 characters."""
IMAGE_TOKENS = 1000
"""What an image counts for in an estimate (providers charge by its pixels, which the log does not
hold)."""


def estimate(events: Sequence[SessionEvent]) -> int:
    """The tokens the next model call's history holds, estimated: the last model call's reported
    context (input, cached input and output) or the last compaction's estimate, whichever is
    later, plus one token per 4 characters of what the model reads that was logged since."""
    chars = 0
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        match event:
            case CompactionEvent():
                return event.data.tokens + chars // CHARS_PER_TOKEN
            case AssistantMessageEvent() if event.data.usage is not None:
                return event.data.usage.context + chars // CHARS_PER_TOKEN
            case AssistantMessageEvent():
                chars += content_chars(event.data.content)
            case UserMessageEvent() if event.data.source.kind not in UNSEEN_SOURCES:
                chars += content_chars(event.data.content)
            case ToolResultEvent():
                chars += content_chars(event.data.content)
    return chars // CHARS_PER_TOKEN


def content_chars(blocks: Iterable[ContentBlock | AssistantBlock]) -> int:
    """The characters a model reads of `blocks` (an image counts as `IMAGE_TOKENS`)."""
    total = 0
    for block in blocks:
        match block:
            case TextContent() | TextBlock() | ReasoningBlock():
                total += len(block.text)
            case ToolCallBlock():
                total += len(block.name) + len(block.arguments)
            case ImageContent():
                total += IMAGE_TOKENS * CHARS_PER_TOKEN
            case _:
                total += len(json.dumps(block.dump()))
    return total


def history_tokens(messages: Sequence[Message]) -> int:
    """The size of a history, estimated from its text alone. The system prompt and the tools are
    left out: they hold the session's cwd, so a count with them would differ from one checkout to
    the next while the history is the same."""
    return sum(content_chars(message.content) for message in messages) // CHARS_PER_TOKEN


class Plan(NamedTuple):
    """A compaction to make in the open turn: the history it summarizes, and the seq from which
    user messages before the turn are kept verbatim."""

    history: list[Message]
    cut_seq: int


def plan(events: Sequence[SessionEvent], keep_recent_tokens: int) -> Plan | None:
    """What compacting the open turn's history means: everything the model reads from before the
    turn is summarized (the turn itself is kept whole), and the most recent user messages from
    before it are kept as long as they fit in `keep_recent_tokens` (whole messages only, never one
    the last compaction already summarized). None when there is nothing to summarize: no message
    before the turn that the last compaction did not summarize, or the turn compacted already."""
    turn_start = _last(events, TurnStartEvent, len(events))
    assert turn_start is not None, "a compaction happens inside a turn"
    last = _last(events, CompactionEvent, len(events))
    if last is not None and last > turn_start:
        return None  # the turn compacted already: what came before it is summarized
    before = events[:turn_start]
    floor, unsummarized = 0, before
    if last is not None:
        previous = before[last]
        assert isinstance(previous, CompactionEvent)
        # What the last compaction did not summarize: its own turn (kept whole) and what followed.
        start = _last(before, TurnStartEvent, last)
        floor, unsummarized = previous.data.cut_seq, [*before[start:last], *before[last + 1 :]]
    if not derive_messages(unsummarized):
        return None
    cut_seq, budget = events[turn_start].seq, keep_recent_tokens * CHARS_PER_TOKEN
    for event in reversed(before):
        if event.seq < floor:
            break
        if isinstance(event, UserMessageEvent) and event.data.source.kind not in UNSEEN_SOURCES:
            budget -= content_chars(event.data.content)
            if budget < 0:
                break
            cut_seq = event.seq
    return Plan(derive_messages(before), cut_seq)


def without_oldest(history: Sequence[Message]) -> list[Message]:
    """`history` without its oldest exchange: its first message, and what follows up to the next
    user message (so no tool result loses its call). Empty when nothing would be left."""
    start = 1
    while start < len(history) and not isinstance(history[start], UserMessage):
        start += 1
    return list(history[start:])


def _last(events: Sequence[SessionEvent], kind: type[SessionEvent], stop: int) -> int | None:
    for index in range(stop - 1, -1, -1):
        if isinstance(events[index], kind):
            return index
    return None
