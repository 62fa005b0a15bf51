"""Loader plugin providing `ctx.get(SESSIONS)`: the event-type registry and the on-disk session store."""

from __future__ import annotations

import os
from pathlib import Path

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.persistence import SESSIONS, SessionStore
from acp_agent.session.registry import default_registry

ENV_DIR = "ACP_AGENT_SESSIONS"

name = "sessions"
inject: tuple[str, ...] = ()


class Config(PluginConfig):
    dir: str = ""
    """Where session logs go. `ACP_AGENT_SESSIONS` wins over it; with neither, the user's state
    directory (`$XDG_STATE_HOME/acp-agent/sessions`, else `~/.local/state/acp-agent/sessions`)."""


def sessions_dir(config: Config) -> Path:
    chosen = os.environ.get(ENV_DIR) or config.dir
    if chosen:
        return Path(chosen).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "acp-agent" / "sessions"


def apply(ctx: Context, config: Config) -> Disposer:
    store = SessionStore(sessions_dir(config), registry=default_registry())
    # Closed when the context's scope unwinds, after the agents were disposed at shutdown.
    return combine(store.close, ctx.provide(SESSIONS, store))
