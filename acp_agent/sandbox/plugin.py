"""Loader plugin providing `ctx.get(SANDBOX)`: how commands are confined.

Row: `{id: sandbox, name: acp_agent.sandbox.plugin, config: {backend: auto, network: allow,
extraWritable: [], allowFullAccess: true}}`. The agent's configuration directory (where
`credentials` lives) is hidden from every confined command.
"""

from __future__ import annotations

import os

from pydantic import field_validator

from acp_agent.config_dir import config_dir
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.sandbox.backends import Setting
from acp_agent.sandbox.policy import Network
from acp_agent.sandbox.service import SANDBOX, Sandbox

name = "sandbox"
inject = ()


class Config(PluginConfig):
    backend: Setting = "auto"
    """`auto`: bubblewrap when it works here, else Landlock; `none`: no sandbox, so every confined
    command is refused."""
    network: Network = "allow"
    extra_writable: list[str] = []
    """Absolute directories every `workspace-write` command may also change (`/tmp`, a cache)."""
    allow_full_access: bool = True
    """Offer the Full access mode (commands unconfined, nothing asked)."""

    @field_validator("extra_writable")
    @classmethod
    def _absolute(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if not os.path.isabs(path):
                raise ValueError(f"{path!r} is not an absolute path")
        return paths


def apply(ctx: Context, config: Config) -> Disposer:
    sandbox = Sandbox(
        config.backend,
        network=config.network,
        extra_writable=config.extra_writable,
        allow_full_access=config.allow_full_access,
        hidden=[config_dir()],
    )
    return ctx.provide(SANDBOX, sandbox)
