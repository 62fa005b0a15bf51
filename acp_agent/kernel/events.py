"""The event bus: fire-and-forget `emit`, awaited `serial` / `parallel`, and middleware `waterfall`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from acp_agent.kernel.errors import NoListener
from acp_agent.kernel.scope import Disposer

Listener = Callable[..., Any]
Next = Callable[[], Awaitable[Any]]


class Events:
    """Named events with listeners in registration order."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[tuple[Listener]]] = {}

    def on(self, name: str, listener: Listener) -> Disposer:
        """Add `listener` to `name`; the disposer removes it."""
        entries = self._listeners.setdefault(name, [])
        entry = (listener,)  # one object per registration: the disposer removes this one only, once
        entries.append(entry)

        def dispose() -> None:
            for i, candidate in enumerate(entries):
                if candidate is entry:
                    del entries[i]
                    return

        return dispose

    def listeners(self, name: str) -> list[Listener]:
        """A snapshot of the listeners of `name`, so a listener may unsubscribe while it runs."""
        return [entry[0] for entry in self._listeners.get(name, ())]

    def emit(self, name: str, *args: Any) -> None:
        """Call every (synchronous) listener; nothing is awaited."""
        for listener in self.listeners(name):
            listener(*args)

    async def serial(self, name: str, *args: Any) -> list[Any]:
        """Await each async listener in turn; their results in order."""
        return [await listener(*args) for listener in self.listeners(name)]

    async def parallel(self, name: str, *args: Any) -> list[Any]:
        """Await all async listeners at once; their results in registration order."""
        listeners = self.listeners(name)
        results: list[Any] = [None] * len(listeners)

        async def run(i: int, listener: Listener) -> None:
            results[i] = await listener(*args)

        async with anyio.create_task_group() as tg:
            for i, listener in enumerate(listeners):
                tg.start_soon(run, i, listener)
        return results

    async def waterfall(self, name: str, *args: Any) -> Any:
        """Run listeners as middleware: `await listener(*args, next=...)`.

        A listener calls `await next()` to defer to the rest of the chain, or returns without
        calling it and so owns the call (this is how a test model short-circuits the real one).
        """
        return await _chain(name, self.listeners(name), args, 0)


async def _chain(name: str, listeners: list[Listener], args: tuple[Any, ...], i: int) -> Any:
    """The waterfall from listener `i` on. A module function, not a closure calling itself: such a
    closure is a reference cycle holding the call's arguments until the cyclic collector runs."""
    if i == len(listeners):
        raise NoListener(f"no listener of {name!r} handled the call")
    return await listeners[i](*args, next=lambda: _chain(name, listeners, args, i + 1))
