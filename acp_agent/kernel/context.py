"""The plugin context: typed services, the event bus, the root scope and the task group."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Final, Generic, TypeVar

import anyio
from anyio.abc import TaskGroup

from acp_agent.kernel.errors import KernelError, ServiceConflict, ServiceNotFound
from acp_agent.kernel.events import EventKey, Events
from acp_agent.kernel.scope import Disposer, Scope

SHUTDOWN: Final = EventKey[Callable[[], Awaitable[object]]]("shutdown")
"""Serial event awaited when the context stops, before its tasks are cancelled (flush, dispose)."""

T = TypeVar("T")


class ServiceKey(Generic[T]):
    """A service's name and type: `ctx.get(KEY)` is a `T` to the type checker.

    A key is defined once, beside the type of its service (`SESSIONS` in `acp_agent.session`);
    providers and consumers import it from there. The loader's `inject` lists keep the names.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ServiceKey({self.name!r})"


class Context:
    """What plugins share: services under typed keys (`ctx.get(SESSIONS)`), events and a scope."""

    def __init__(self) -> None:
        self.events = Events()
        self.scope = Scope()
        self._services: dict[str, Any] = {}
        self._tasks: TaskGroup | None = None

    def provide(self, key: ServiceKey[T], service: T) -> Disposer:
        """Publish `service` under `key` until the returned disposer runs."""
        name = key.name
        if name in self._services:
            raise ServiceConflict(f"service {name!r} is already provided")
        self._services[name] = service
        provided = True

        def dispose() -> None:  # once only: a stale disposer must not remove a later provider
            nonlocal provided
            if provided:
                provided = False
                del self._services[name]

        return dispose

    def has(self, key: ServiceKey[Any] | str) -> bool:
        """Whether a service is provided under `key` (or the name, as the loader's `inject` says)."""
        return (key if isinstance(key, str) else key.name) in self._services

    def get(self, key: ServiceKey[T]) -> T:
        """The service under `key`; `ServiceNotFound` when none is provided."""
        try:
            service: T = self._services[key.name]
        except KeyError:
            raise ServiceNotFound(key.name) from None
        return service

    def find(self, key: ServiceKey[T]) -> T | None:
        """The service under `key`, or None: for a service a composition may leave out."""
        service: T | None = self._services.get(key.name)
        return service

    @property
    def tasks(self) -> TaskGroup:
        """The task group that long-lived work (agent loops) runs in; see `running()`."""
        if self._tasks is None:
            raise KernelError("the context is not running: use `async with ctx.running()`")
        return self._tasks

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Context]:
        """Run the context: open its task group; on exit shut down, cancel what is left, dispose."""
        try:
            async with anyio.create_task_group() as tg:
                self._tasks = tg
                try:
                    yield self
                finally:
                    with anyio.CancelScope(shield=True):
                        await self.events.serial(SHUTDOWN)
                    tg.cancel_scope.cancel()
        finally:
            self._tasks = None
            self.scope.dispose()
