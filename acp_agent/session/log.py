"""The in-memory session log: append-only, invariant-checked, observable."""

from __future__ import annotations

import time
import weakref
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar

from pydantic import BaseModel

from acp_agent.kernel._compact import compacted
from acp_agent.kernel.scope import Disposer
from acp_agent.session.content import StreamChunk, TextContent
from acp_agent.session.errors import TurnsOutOfRange, UnbalancedSeed
from acp_agent.session.events import (
    AssistantChunkEvent,
    EventOf,
    SessionEvent,
    SessionHeader,
    StepData,
    StepEndEvent,
    StreamedChunk,
    ToolError,
    ToolResultData,
    ToolResultEvent,
    TurnEndData,
    TurnEndEvent,
    TurnEndReason,
)
from acp_agent.session.invariants import LogState
from acp_agent.session.registry import EventRegistry

Subscriber = Callable[[SessionEvent], None]
ChunkSubscriber = Callable[[StreamedChunk], None]
Archive = Callable[[], Iterable[SessionEvent]]
"""Reads back, in seq order, every event a store has written of a session."""

T = TypeVar("T")
_new_tuple = tuple.__new__
"""A named tuple made without its class's generated `__new__` (a Python call: one per streamed chunk)."""
D = TypeVar("D", bound=BaseModel | Mapping[str, Any])


class LogWriter(Protocol):
    """What writes a session's log (a store's open file): shown each event before it is kept."""

    def write(self, event: SessionEvent) -> None:
        """Write an event's line (any other than a streamed chunk); raise to refuse the event."""

    def hold(self, streamed: StreamedChunk) -> None:
        """Take a streamed chunk's line (written with the next line); raise to refuse the chunk."""


ARCHIVED_TYPES: Final = frozenset({"assistant/chunk"})
"""Events a session lets go of once a store holds them: the streamed chunks, by far the most
numerous, which nothing reads after they were delivered (the step's `assistant/message` states
the blocks whole) except a fork's seed, which reads them back."""


def now_ms() -> int:
    """Wall-clock time in epoch milliseconds, the unit of `SessionEvent.time`."""
    return time.time_ns() // 1_000_000


class Session:
    """A session's header and its event log. Every event passes the invariants before it is
    kept; subscribers see each kept event synchronously, in registration order. A subscriber that
    raises does not stop the others; its error is raised from `append` once all have run.

    Once a store holds the log (`archive`), the session keeps in memory every event but the
    streamed chunks (`ARCHIVED_TYPES`): `events` then has gaps in its seqs, `next_seq` counts
    them all, and `all_events()` reads the chunks back.

    `state`: the state after `seed` when a reader checked the seed already, event by event, and
    kept only some of its events in memory (a log loaded from a store); the seed is then taken
    as it is."""

    def __init__(
        self,
        header: SessionHeader,
        *,
        registry: EventRegistry,
        seed: Sequence[SessionEvent] = (),
        clock: Callable[[], int] = now_ms,
        state: LogState | None = None,
    ) -> None:
        self.header = compacted(header)
        self.registry = registry
        self._clock = clock
        self._archive: Archive | None = None
        self._writer: LogWriter | None = None
        # Replaced, never mutated, so a subscriber may unsubscribe while being notified.
        self._subscribers: tuple[Subscriber, ...] = ()
        """Those shown every event but the streamed chunks."""
        self._chunk_subscribers: tuple[ChunkSubscriber, ...] = ()
        """Those shown the streamed chunks: their fields, or their events (`_ChunkEvents`)."""
        self._chunk_event: AssistantChunkEvent | None = None
        """The event of the chunk being delivered, once one was made (`_event_of`)."""
        self._delivering = False
        self._backlog: list[SessionEvent | StreamedChunk] = []
        """Events (or streamed chunks' fields) appended while delivering, seldom more than one: a
        list, which is smaller empty than a deque (README.md, Performance)."""
        if state is not None:
            self.state = state.copy()
            self._events = list(seed)
        else:
            self.state = LogState(registry)
            self._events = []
            for event in seed:
                self.state.check(event)
                self.state.apply(event)
                self._events.append(compacted(event))
        if not self.state.balanced:
            raise UnbalancedSeed(f"a seed must end balanced, but turn {self.state.open_turn} is open")

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def cwd(self) -> str | None:
        return self.header.cwd

    @property
    def events(self) -> Sequence[SessionEvent]:
        """The events held in memory, in seq order (a live view: do not mutate it): the whole log
        until a store holds it, then every event but the streamed chunks."""
        return self._events

    @property
    def next_seq(self) -> int:
        """The seq of the next event: how many events the log has, those not in memory included."""
        return self.state.next_seq

    def events_from(self, seq: int) -> Sequence[SessionEvent]:
        """The events held in memory whose seq is `seq` or later (a copy)."""
        return self._events[bisect_left(self._events, seq, key=_seq) :]

    def archive(self, archive: Archive) -> None:
        """A store now holds every event of the log, and `archive` reads them back: the chunks
        leave memory, those kept so far and those to come."""
        self._archive = archive
        self._events = [event for event in self._events if event.type not in ARCHIVED_TYPES]

    def write_with(self, writer: LogWriter) -> Disposer:
        """Have `writer` write every event appended from now on, after its checks and before it
        is kept or shown to anyone, until the disposer runs. A write that raises refuses the
        event as a broken invariant does: the log, its state and its subscribers are as they
        were, and `append` raises the writer's error. So what a subscriber (the editor's view)
        is shown is what the writer wrote, and the session goes on once writes succeed again."""
        self._writer = writer
        return _Writing(self, writer)

    def all_events(self) -> list[SessionEvent]:
        """Every event of the log in seq order: the chunks not in memory are read back from the
        store (a fork's seed holds them all)."""
        if len(self._events) == self.state.next_seq:
            return list(self._events)
        if self._archive is None:
            raise RuntimeError(f"session {self.id!r} left events on disk, but no store holds it")
        stored = list(self._archive())
        written = len(stored)
        return stored + [event for event in self._events if event.seq >= written]

    @property
    def open_turn(self) -> int | None:
        return self.state.open_turn

    @property
    def next_turn(self) -> int:
        return self.state.last_turn + 1

    def append(self, event_cls: type[EventOf[D]], data: D, *, ignorable: bool = False) -> SessionEvent:
        """Log a new event of a registered class with its data, stamped with the next seq and the
        clock's time; an `ignorable` one loads even where its type is not registered."""
        registry = self.registry
        event = registry.build(
            registry.type_of(event_cls), self.state.next_seq, self._clock(), data, ignorable=ignorable
        )
        return self.append_event(event)

    def append_chunk(self, turn: int, step: int, chunk: StreamChunk) -> None:
        """`append` of an `assistant/chunk` (the hot path: one per streamed chunk), checked only
        by the rules a chunk has. Its event is made only for what reads events: the log in
        memory (until a store holds it) and the subscribers that take the chunks' events; the
        others are shown its fields (see `subscribe`)."""
        state = self.state
        seq = state.next_seq
        state.check_chunk(seq, turn, step)
        streamed = _new_tuple(StreamedChunk, (seq, self._clock(), turn, step, chunk))
        if self._writer is not None:
            self._writer.hold(streamed)
        state.advance()
        if self._archive is None:  # kept in memory: its event is made now
            event = AssistantChunkEvent.streamed(streamed)
            self._events.append(event)
            self._deliver(event)
        else:
            self._deliver(streamed)

    def append_event(self, event: SessionEvent) -> SessionEvent:
        """Log a prebuilt event as it is (its own seq and time; repair uses this). A chunk marked
        ignorable is refused (ValueError): its type is a core one, which every reader knows, and
        its subscribers are shown the fields it streamed with, which have no such mark."""
        if isinstance(event, AssistantChunkEvent) and event.ignorable is not None:
            raise ValueError("an assistant/chunk is never ignorable: every reader knows the type")
        self.state.check(event)
        if (writer := self._writer) is not None:
            if isinstance(event, AssistantChunkEvent):
                writer.hold(event.fields)
            else:
                writer.write(event)
        self.state.apply(event)
        if self._archive is None or event.type not in ARCHIVED_TYPES:
            self._events.append(compacted(event))
        self._deliver(event)
        return event

    def _event_of(self, streamed: StreamedChunk) -> AssistantChunkEvent:
        """The event of the streamed chunk being delivered: made once, for all that read it (the
        chunk's own, when it was appended as an event or kept in memory)."""
        event = self._chunk_event
        if event is None or event.seq != streamed.seq:
            event = self._chunk_event = AssistantChunkEvent.streamed(streamed)
        return event

    def _deliver(self, logged: SessionEvent | StreamedChunk) -> None:
        """Show a kept event (or a streamed chunk's fields) to the subscribers (see the class)."""
        if self._delivering:
            # Appended by a subscriber: delivered once every subscriber has seen the current
            # event, so all of them (the store among them) see the log in seq order.
            self._backlog.append(logged)
            return
        self._delivering = True
        failure: Exception | None = None
        try:
            current = logged
            while True:
                if isinstance(current, tuple):
                    failure = _notify(self._chunk_subscribers, current, failure)
                elif isinstance(current, AssistantChunkEvent):  # a chunk appended as an event
                    self._chunk_event = current
                    failure = _notify(self._chunk_subscribers, current.fields, failure)
                else:
                    failure = _notify(self._subscribers, current, failure)
                if not self._backlog:
                    break
                current = self._backlog.pop(0)
        finally:
            self._delivering = False
            self._chunk_event = None
            self._backlog.clear()  # only left over when a BaseException cut delivery short
        if failure is not None:
            raise failure

    def subscribe(self, subscriber: Subscriber, *, chunks: bool | ChunkSubscriber = True) -> Disposer:
        """Call `subscriber` with every event appended from now on but the streamed chunks
        (`ARCHIVED_TYPES`, which a long answer appends by the thousand), until the disposer runs.
        The chunks, among the subscribers that take them in the order they subscribed: `chunks`
        True, their events to `subscriber` too (one made per chunk for all of them); a
        `ChunkSubscriber`, their fields to it, and no event made for it (the hot path); False,
        nothing."""
        self._subscribers = (*self._subscribers, subscriber)
        taker: ChunkSubscriber | None = None
        if chunks is not False:
            taker = _ChunkEvents(self, subscriber) if chunks is True else chunks
            self._chunk_subscribers = (*self._chunk_subscribers, taker)
        return _Subscription(self, subscriber, taker)


class _Subscription:
    """The disposer `subscribe` returns: one small object rather than a closure and its cells
    (every open session holds three; the figures: README.md, Performance). It removes one
    occurrence per subscribe, however often it runs, and lets go of the session when it does."""

    __slots__ = ("session", "subscriber", "taker")

    def __init__(self, session: Session, subscriber: Subscriber, taker: ChunkSubscriber | None) -> None:
        self.session: Session | None = session
        self.subscriber = subscriber
        self.taker = taker

    def __call__(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            session._subscribers = _without(session._subscribers, self.subscriber)
            if self.taker is not None:
                session._chunk_subscribers = _without(session._chunk_subscribers, self.taker)


class _Writing:
    """The disposer `write_with` returns: the session stops writing through its writer."""

    __slots__ = ("session", "writer")

    def __init__(self, session: Session, writer: LogWriter) -> None:
        self.session: Session | None = session
        self.writer = writer

    def __call__(self) -> None:
        session, self.session = self.session, None
        if session is not None and session._writer is self.writer:
            session._writer = None


class _ChunkEvents:
    """A `subscribe` subscriber that takes chunks, shown their events (one made per chunk for
    all of them, `Session._event_of`). Its session is a weak reference: the session holds this,
    and a cycle would keep a closed session until the cyclic collector runs."""

    __slots__ = ("session", "subscriber")

    def __init__(self, session: Session, subscriber: Subscriber) -> None:
        self.session = weakref.ref(session)
        self.subscriber = subscriber

    def __call__(self, streamed: StreamedChunk) -> None:
        session = self.session()
        assert session is not None  # only the session calls this
        self.subscriber(session._event_of(streamed))


def _notify(subscribers: tuple[Callable[[T], None], ...], logged: T, failure: Exception | None) -> Exception | None:
    """Call each subscriber with `logged`; the first failure (`failure`, if one came before)."""
    for subscriber in subscribers:
        try:
            subscriber(logged)
        except Exception as exc:  # the others (the store) must still see every event
            failure = failure or exc
    return failure


def _without(subscribers: tuple[T, ...], subscriber: T) -> tuple[T, ...]:
    remaining = list(subscribers)
    remaining.remove(subscriber)
    return tuple(remaining)


def _seq(event: SessionEvent) -> int:
    return event.seq


def completed_turn_prefix(events: Sequence[SessionEvent], turns: int | None = None) -> list[SessionEvent]:
    """The events up to and including the last turn/end (a balanced seed), or the `turns`-th one
    when given; [] if there is none (or `turns` is 0). `TurnsOutOfRange` when the log ended fewer."""
    if turns is None:
        for index in range(len(events) - 1, -1, -1):
            if events[index].type == "turn/end":
                return list(events[: index + 1])
        return []
    ended = 0
    for index, event in enumerate(events):
        if ended == turns:
            return list(events[:index])
        ended += event.type == "turn/end"
    if ended == turns:
        return list(events)
    raise TurnsOutOfRange(f"the log ended {ended} turn(s), not {turns}")


def closing_events(state: LogState, time: int, error: ToolError, reason: TurnEndReason) -> Iterator[SessionEvent]:
    """The events that end the open turn of a log at `state`, stamped `time`: an error result
    (`error`) for each call the open step owes, the step's end, the turn's end (`reason`). Each
    is made once the caller has applied the one before (appended it, or applied it to `state`):
    a caller that stops halfway (a log that cannot be written) asks again later from where it
    stands."""
    turn = state.open_turn
    assert turn is not None  # only an open turn is ended
    for call_id, step in list(state.pending_calls.items()):
        content: list[Any] = [TextContent(text=f"Error: {error.message}")]
        data = ToolResultData(turn=turn, step=step, call_id=call_id, content=content, is_error=True, error=error)
        yield ToolResultEvent(seq=state.next_seq, time=time, data=data)
    if state.open_step is not None:
        yield StepEndEvent(seq=state.next_seq, time=time, data=StepData(turn=turn, step=state.open_step))
    yield TurnEndEvent(seq=state.next_seq, time=time, data=TurnEndData(turn=turn, reason=reason))
