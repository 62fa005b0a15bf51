"""The event bus: fire-and-forget `emit`, awaited `serial` / `parallel`, and middleware `waterfall`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, ParamSpec, TypeVar

import anyio

from acp_agent.kernel.errors import NoListener
from acp_agent.kernel.scope import Disposer

P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A")
L = TypeVar("L", bound=Callable[..., Any])
L_co = TypeVar("L_co", bound=Callable[..., Any], covariant=True)

Next = Callable[[], Awaitable[R]]
"""What a waterfall listener calls to defer to the rest of the chain."""


class EventName(Generic[L_co]):
    """An event's name, covariant in its listeners' type: what a dispatch (`emit`, `serial`,
    `parallel`, `waterfall`) takes, so that it may pass a subtype of what the listeners accept."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class EventKey(EventName[L]):
    """An event's name and its listeners' type `L`: `events.on(KEY, listener)` checks the listener,
    and `emit` / `serial` / `parallel` / `waterfall` what they pass and return. (Invariant in `L`,
    unlike its base: a listener is checked against `L` itself, not against some common supertype.)

    A key is defined once, beside what the event is about (`PUBLISHED` in `agent/factory.py`);
    listeners and publishers import it from there. The listeners' type says how the event is
    dispatched: `EventKey[Callable[[Agent], object]]` is emitted (synchronous listeners),
    `EventKey[Callable[[Agent], Awaitable[object]]]` awaited, and a key whose listeners take a
    request and a `Next[T]` and return an `Awaitable[T]` (a protocol saying so, as `ModelAdapter`
    does, or a `Callable`) is a waterfall."""

    __slots__ = ()


class Events:
    """Events under typed keys, with listeners in registration order."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[tuple[Any]]] = {}  # each typed by the key it is under (`on`)

    def on(self, key: EventKey[L], listener: L) -> Disposer:
        """Add `listener` to `key`'s event; the disposer removes it."""
        entries = self._listeners.setdefault(key.name, [])
        entry = (listener,)  # one object per registration: the disposer removes this one only, once
        entries.append(entry)

        def dispose() -> None:
            for i, candidate in enumerate(entries):
                if candidate is entry:
                    del entries[i]
                    return

        return dispose

    def listeners(self, key: EventName[L]) -> list[L]:
        """A snapshot of the listeners of `key`, so a listener may unsubscribe while it runs."""
        return [entry[0] for entry in self._listeners.get(key.name, ())]

    def emit(self, key: EventName[Callable[P, object]], *args: P.args, **kwargs: P.kwargs) -> None:
        """Call every (synchronous) listener; nothing is awaited."""
        for listener in self.listeners(key):
            listener(*args, **kwargs)

    async def serial(self, key: EventName[Callable[P, Awaitable[R]]], *args: P.args, **kwargs: P.kwargs) -> list[R]:
        """Await each async listener in turn; their results in order."""
        return [await listener(*args, **kwargs) for listener in self.listeners(key)]

    async def parallel(self, key: EventName[Callable[P, Awaitable[R]]], *args: P.args, **kwargs: P.kwargs) -> list[R]:
        """Await all async listeners at once; their results in registration order."""
        listeners = self.listeners(key)
        results: list[Any] = [None] * len(listeners)

        async def run(i: int, listener: Callable[P, Awaitable[R]]) -> None:
            results[i] = await listener(*args, **kwargs)

        async with anyio.create_task_group() as tg:
            for i, listener in enumerate(listeners):
                tg.start_soon(run, i, listener)
        return results

    async def waterfall(self, key: EventName[Callable[[A, Next[R]], Awaitable[R]]], request: A) -> R:
        """Run listeners as middleware: `await listener(request, next)`.

        A listener calls `await next()` to defer to the rest of the chain, or returns without
        calling it and so owns the call (this is how a test model short-circuits the real one).
        """
        return await _chain(key.name, self.listeners(key), request, 0)


async def _chain(name: str, listeners: list[Callable[[A, Next[R]], Awaitable[R]]], request: A, i: int) -> R:
    """The waterfall from listener `i` on. A module function, not a closure calling itself: such a
    closure is a reference cycle holding the call's request until the cyclic collector runs."""
    if i == len(listeners):
        raise NoListener(f"no listener of {name!r} handled the call")
    return await listeners[i](request, lambda: _chain(name, listeners, request, i + 1))
