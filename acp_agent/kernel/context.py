"""The plugin context: named services, the event bus, the root scope and the task group."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup

from acp_agent.kernel.errors import KernelError, ServiceConflict, ServiceNotFound
from acp_agent.kernel.events import Events
from acp_agent.kernel.scope import Disposer, Scope

SHUTDOWN = "shutdown"
"""Serial event awaited when the context stops, before its tasks are cancelled (flush, dispose)."""


class Context:
    """What plugins share: services by name (`ctx.sessions`, `ctx.llm`, ...), events and a scope."""

    def __init__(self) -> None:
        self.events = Events()
        self.scope = Scope()
        self._services: dict[str, Any] = {}
        self._tasks: TaskGroup | None = None

    def provide(self, name: str, service: Any) -> Disposer:
        """Publish `service` under `name` until the returned disposer runs."""
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

    def has(self, name: str) -> bool:
        return name in self._services

    def get(self, name: str) -> Any:
        try:
            return self._services[name]
        except KeyError:
            raise ServiceNotFound(name) from None

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not real attributes: those are services.
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get(name)

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
