"""The plugin kernel: a context of named services, an event bus, scopes and the YAML loader."""

from __future__ import annotations

from acp_agent.kernel.context import SHUTDOWN, Context, ServiceKey
from acp_agent.kernel.errors import (
    KernelError,
    LoaderError,
    NoListener,
    ScopeDisposed,
    ServiceConflict,
    ServiceNotFound,
)
from acp_agent.kernel.events import EventKey, EventName, Events, Next
from acp_agent.kernel.loader import Row, compose, read_rows
from acp_agent.kernel.models import Model
from acp_agent.kernel.plugin import Plugin, PluginConfig
from acp_agent.kernel.scope import Disposer, Scope, combine

__all__ = [
    "SHUTDOWN",
    "Context",
    "Disposer",
    "EventKey",
    "EventName",
    "Events",
    "KernelError",
    "LoaderError",
    "Model",
    "Next",
    "NoListener",
    "Plugin",
    "PluginConfig",
    "Row",
    "Scope",
    "ScopeDisposed",
    "ServiceConflict",
    "ServiceKey",
    "ServiceNotFound",
    "combine",
    "compose",
    "read_rows",
]
