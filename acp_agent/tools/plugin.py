"""Loader plugin providing `ctx.tools`, the registry every tool row registers into."""

from __future__ import annotations

from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.tools.registry import ToolRegistry

name = "tools"
inject: tuple[str, ...] = ()


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.provide("tools", ToolRegistry())
