"""The in-memory session log: append-only, invariant-checked, observable."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from acp_agent.kernel.scope import Disposer
from acp_agent.session.errors import UnbalancedSeed
from acp_agent.session.events import SessionEvent, SessionHeader
from acp_agent.session.invariants import LogState
from acp_agent.session.registry import EventRegistry

Subscriber = Callable[[SessionEvent], None]


def now_ms() -> int:
    """Wall-clock time in epoch milliseconds, the unit of `SessionEvent.time`."""
    return time.time_ns() // 1_000_000


class Session:
    """A session's header and its event log. Every event passes the invariants before it is
    kept; subscribers see each kept event synchronously, in registration order. A subscriber that
    raises does not stop the others; its error is raised from `append` once all have run."""

    def __init__(
        self,
        header: SessionHeader,
        *,
        registry: EventRegistry,
        seed: Sequence[SessionEvent] = (),
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.header = header
        self.registry = registry
        self.state = LogState(registry)
        self._clock = clock
        self._events: list[SessionEvent] = []
        # Replaced, never mutated, so a subscriber may unsubscribe while being notified.
        self._subscribers: tuple[Subscriber, ...] = ()
        self._delivering = False
        self._backlog: deque[SessionEvent] = deque()
        for event in seed:
            self.state.check(event)
            self.state.apply(event)
            self._events.append(event)
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
        """The log so far (a live view: do not mutate it)."""
        return self._events

    @property
    def open_turn(self) -> int | None:
        return self.state.open_turn

    @property
    def next_turn(self) -> int:
        return self.state.last_turn + 1

    def append(self, type: str, data: BaseModel | Mapping[str, Any], *, ignorable: bool = False) -> SessionEvent:
        """Log a new event of a registered type, stamped with the next seq and the clock's time;
        an `ignorable` one loads even where its type is not registered."""
        event = self.registry.build(type, len(self._events), self._clock(), data, ignorable=ignorable)
        return self.append_event(event)

    def append_event(self, event: SessionEvent) -> SessionEvent:
        """Log a prebuilt event as it is (its own seq and time; repair uses this)."""
        self.state.check(event)
        self.state.apply(event)
        self._events.append(event)
        if self._delivering:
            # Appended by a subscriber: delivered once every subscriber has seen the current
            # event, so all of them (the store among them) see the log in seq order.
            self._backlog.append(event)
            return event
        self._delivering = True
        failure: Exception | None = None
        try:
            current = event
            while True:
                for subscriber in self._subscribers:
                    try:
                        subscriber(current)
                    except Exception as exc:  # the others (the store) must still see every event
                        failure = failure or exc
                if not self._backlog:
                    break
                current = self._backlog.popleft()
        finally:
            self._delivering = False
            self._backlog.clear()  # only left over when a BaseException cut delivery short
        if failure is not None:
            raise failure
        return event

    def subscribe(self, subscriber: Subscriber) -> Disposer:
        """Call `subscriber` with every event appended from now on, until the disposer runs."""
        self._subscribers = (*self._subscribers, subscriber)

        done = False

        def unsubscribe() -> None:
            nonlocal done
            if not done:  # one occurrence per subscribe, however often the disposer runs
                done = True
                remaining = list(self._subscribers)
                remaining.remove(subscriber)
                self._subscribers = tuple(remaining)

        return unsubscribe


def completed_turn_prefix(events: Sequence[SessionEvent]) -> list[SessionEvent]:
    """The events up to and including the last turn/end (a balanced seed); [] if there is none."""
    for index in range(len(events) - 1, -1, -1):
        if events[index].type == "turn/end":
            return list(events[: index + 1])
    return []
