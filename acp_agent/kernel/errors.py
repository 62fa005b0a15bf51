"""Errors of the kernel: services, events and the plugin loader."""

from __future__ import annotations

from acp_agent.kernel.scope import ScopeDisposed


class KernelError(Exception):
    """Base class of the kernel's errors."""


class ServiceNotFound(KernelError):
    """Raised when a service is looked up that no plugin provided."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no service named {name!r} is provided")
        self.name = name


class ServiceConflict(KernelError):
    """Raised when a second provider registers a service name that is taken."""


class NoListener(KernelError):
    """Raised when a waterfall reaches its end and nobody owned the call."""


class LoaderError(KernelError):
    """Raised when a row of a loader config cannot be applied; names the row id and the reason."""

    def __init__(self, row_id: str, reason: str) -> None:
        super().__init__(f"loader row {row_id!r}: {reason}")
        self.row_id = row_id
        self.reason = reason


__all__ = ["KernelError", "LoaderError", "NoListener", "ScopeDisposed", "ServiceConflict", "ServiceNotFound"]
