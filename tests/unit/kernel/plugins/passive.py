"""A plugin without `inject` whose apply registers nothing and returns no disposer."""

from __future__ import annotations

from acp_agent.kernel import Context, PluginConfig

name = "passive"
Config = PluginConfig


def apply(ctx: Context, config: PluginConfig) -> None:
    return None
