"""A stored conversation as the `session/update`s that showed it live: what `session/load` replays.

The session's own events go through the same `UpdateMapper` as live ones, so every tool call is
its `tool_call` then its `tool_call_update` with the final status. Text and thoughts come back one
chunk per block (the editor shows the same text as live, in a fraction of the frames): a step's
`assistant/message` shows its blocks whole, since a load keeps no chunk of a step that logged its
message; the chunks of a step without one (a crash cut it short) show one chunk per run of
deltas of one block. Added for the replay only: a `user_message_chunk` per
content block of each message the user sent (a prompt, a steer, a slash command the agent
answered itself), which the client showed itself live. Each child agent's activity comes from its
own log (after its fork seed), right before the update that completes the parent's call that started
it, recursively; that is where the live frames of a child sit once concurrent siblings are put in
canonical order. A child shows as it did live: as a child session of its own when the client takes
them, else its tool calls (and its answer on the delegating card) on the top-level session. The
title (`session_info_update`), each model call's `usage_update` and each compaction (its updates or
its card, then the new size) come back where they were sent live; a terminal a call ran in does not
(its text result shows).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from acp_agent.acp.children import ChildSession, Frame
from acp_agent.acp.content import wire_content
from acp_agent.acp.schema import ContentChunk, SessionUpdate
from acp_agent.acp.updates import ChildOrigin, ToolLookup, UpdateMapper
from acp_agent.session.content import BlockEnd, ReasoningDelta, StreamChunk, TextContent, TextDelta
from acp_agent.session.events import (
    COMMAND_SOURCE,
    USER_SOURCES,
    AssistantChunkData,
    AssistantChunkEvent,
    AssistantMessageEvent,
    SessionEvent,
    SessionHeader,
    StepStartEvent,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    UserMessageEvent,
)
from acp_agent.session.routes import CallKeys

_SHOWN_SOURCES = (*USER_SOURCES, COMMAND_SOURCE)
"""What the user typed: their prompts and steers, and the slash commands the agent answered itself."""


@dataclass(frozen=True)
class StoredLog:
    """A stored agent's header and events, and the stored logs of the children it started."""

    header: SessionHeader
    events: Sequence[SessionEvent]
    children: list[StoredLog] = field(default_factory=list)
    damage: str | None = None
    """Why its events could not be read (a damaged child's log): it shows this instead."""

    def descendants(self) -> Iterator[StoredLog]:
        """Its children, theirs, and so on."""
        for child in self.children:
            yield child
            yield from child.descendants()


def history_updates(
    log: StoredLog,
    lookup: ToolLookup,
    child_lookup: ToolLookup,
    *,
    context_window: int | None = None,
    compaction: bool = False,
    child_sessions: bool = False,
    plans: bool = False,
) -> Iterator[Frame]:
    """The updates of a top-level session's log and its children's, each with the session it goes
    out on, in the order described above. `lookup` finds the session's tools, `child_lookup` the
    children's (for their presentation); with `context_window`, each recorded model call's usage is
    a `usage_update` again; each compaction shows as it did live (`compaction`: as
    `compaction_update`s, else as its card). Terminals a call ran in are left out (released long
    ago): its result's text shows instead. `child_sessions`: the client takes child sessions, and
    each child is replayed as one (`children.py`), announced before its traffic, ending with its
    final state. `plans`: the todo lists show as plan operations (`plan_update`, `plan_removed`). An
    iterator: the frames go out as they are built."""
    replay = _Replay(child_lookup, context_window, compaction, child_sessions, plans)
    return replay.log(log, replay.mapper(lookup), log.header.id, top_level=True)


class _Replay(NamedTuple):
    lookup: ToolLookup
    context_window: int | None
    compaction: bool
    child_sessions: bool
    plans: bool

    def mapper(self, lookup: ToolLookup, origin: ChildOrigin | None = None) -> UpdateMapper:
        """A mapper that shows a stored agent as its live one was shown (`origin`: a child's)."""
        return UpdateMapper(
            lookup, origin, context_window=self.context_window, live=False, compaction=self.compaction, plans=self.plans
        )

    def log(
        self,
        log: StoredLog,
        mapper: UpdateMapper,
        session_id: str,
        child: ChildSession | None = None,
        *,
        top_level: bool = False,
    ) -> Iterator[Frame]:
        """One agent's frames (`child`: it is a child session), with its children's."""
        waiting = _children_by_call(log)
        keys = CallKeys()
        open_calls: dict[str, str] = {}
        """Each call id's latest occurrence, as a route key."""
        own_from = log.header.seed_length or 0  # a fork child's seed is its parent's, never shown as its own
        if log.damage is not None:
            text = TextContent(text=f"[the log of subagent {log.header.id} could not be read: {log.damage}]")
            yield session_id, ContentChunk(session_update="agent_message_chunk", content=wire_content(text))
        deltas = _Deltas()
        streamed = False
        """Whether the current step's chunks are in the log (a load keeps them only for a step that
        logged no message): if not, its message shows its blocks."""
        for event in log.events:
            if isinstance(event, ToolCallEvent):
                open_calls[event.data.call_id] = keys.add(event.data.call_id)
            if event.seq < own_from:
                continue
            if not deltas.continued_by(event) and (shown := deltas.flush(mapper)) is not None:
                yield session_id, shown
            if child is not None:
                yield from child.see(event)
            if isinstance(event, AssistantChunkEvent):
                streamed = True
                if deltas.add(event):
                    continue
            match event:
                case StepStartEvent():
                    streamed = False
                case AssistantMessageEvent() if not streamed:
                    for index, block in enumerate(event.data.content):
                        if (update := mapper.map(_chunk_event(event, BlockEnd(index=index, block=block)))) is not None:
                            yield session_id, update
                case UserMessageEvent() if top_level and event.data.source.kind in _SHOWN_SOURCES:
                    yield from (
                        (session_id, ContentChunk(session_update="user_message_chunk", content=wire_content(b)))
                        for b in event.data.content
                    )
                case ToolResultEvent():
                    call_id = event.data.call_id
                    for started in waiting.pop(open_calls.get(call_id, call_id), []):
                        yield from self.child(started, mapper, session_id, event.data)
            yield from ((session_id, update) for update in mapper.updates(event))
        if (shown := deltas.flush(mapper)) is not None:
            yield session_id, shown
        for children in waiting.values():  # started by no call of this log
            for started in children:
                yield from self.child(started, mapper, session_id, None)

    def child(
        self, stored: StoredLog, parent: UpdateMapper, parent_id: str, result: ToolResultData | None
    ) -> Iterator[Frame]:
        """A child's frames: as a child session of `parent_id`'s, or on it; `result`: the parent's
        call's, which ends the child session."""
        header = stored.header
        call_id = header.spawn_call_id or ""
        origin = ChildOrigin(route=header.route or header.id, parent_tool_call_id=parent.wire_id(call_id))
        if not self.child_sessions:
            yield from self.log(stored, self.mapper(self.lookup, origin), parent_id)
            return
        child, opening = ChildSession.opened(header, origin.route, parent_id, parent)
        yield from opening
        yield from self.log(stored, self.mapper(self.lookup, origin._replace(own_session=True)), header.id, child)
        yield from child.end(result)


class _Deltas:
    """Consecutive text (or thought) deltas of one block, replayed as one chunk."""

    def __init__(self) -> None:
        self._first: AssistantChunkEvent | None = None
        self._texts: list[str] = []

    def continued_by(self, event: SessionEvent) -> bool:
        """Whether `event` is a delta of the run's block."""
        first = self._first
        if first is None or not isinstance(event, AssistantChunkEvent):
            return False
        chunk, run = event.data.chunk, first.data.chunk
        return isinstance(chunk, (TextDelta, ReasoningDelta)) and type(chunk) is type(run) and chunk.index == run.index

    def add(self, event: AssistantChunkEvent) -> bool:
        """Take a delta (it continues the run, or starts one after a flush); False for any other chunk."""
        chunk = event.data.chunk
        if not isinstance(chunk, (TextDelta, ReasoningDelta)):
            return False
        if self._first is None:
            self._first = event
        self._texts.append(chunk.text)
        return True

    def flush(self, mapper: UpdateMapper) -> SessionUpdate | None:
        """The run so far as one chunk's update, and a new run."""
        first, texts = self._first, self._texts
        if first is None:
            return None
        self._first, self._texts = None, []
        chunk = first.data.chunk
        assert isinstance(chunk, (TextDelta, ReasoningDelta))
        return mapper.map(_chunk_event(first, type(chunk)(index=chunk.index, text="".join(texts))))


def _chunk_event(at: SessionEvent, chunk: StreamChunk) -> AssistantChunkEvent:
    """A chunk as the replay shows it, where `at` (a chunk or its step's message) is in the log."""
    data = at.data
    return AssistantChunkEvent(
        seq=at.seq, time=at.time, data=AssistantChunkData(turn=data.turn, step=data.step, chunk=chunk)
    )


def _children_by_call(log: StoredLog) -> dict[str, list[StoredLog]]:
    """The children by the route key of the call that started them: their route after the
    parent's (`<call id>`, `<call id>#<n>`, `#<n>`), else their `spawnCallId`; "" for neither."""
    prefix = f"{log.header.route}/" if log.header.route else None
    by_call: dict[str, list[StoredLog]] = {}
    for child in sorted(log.children, key=lambda c: (c.header.created_at, c.header.route or "", c.header.id)):
        route = child.header.route
        if prefix is not None and route is not None and route.startswith(prefix):
            key = route[len(prefix) :]
        else:
            key = child.header.spawn_call_id or ""
        by_call.setdefault(key, []).append(child)
    return by_call
