"""Loader plugin providing `ctx.get(TOOLS)`, the registry every tool row registers into, and the
`tool/display` event type running tools report through (`ToolCallContext.show`)."""

from __future__ import annotations

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.persistence import SESSIONS
from acp_agent.tools.base import ToolDisplayEvent
from acp_agent.tools.registry import TOOLS, ToolRegistry

name = "tools"
inject: tuple[str, ...] = ("sessions",)


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    return combine(
        ctx.get(SESSIONS).registry.register(ToolDisplayEvent, "turn"),
        ctx.provide(TOOLS, ToolRegistry()),
    )
