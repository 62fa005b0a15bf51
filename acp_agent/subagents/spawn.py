"""The `spawn` provider: a fresh child with no inherited conversation. Loader plugin."""

from __future__ import annotations

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.subagents.driver import InProcessProvider
from acp_agent.subagents.registry import SUBAGENTS

name = "spawn"
inject = ("subagents",)


class Config(PluginConfig):
    provider_name: str = "spawn"


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.get(SUBAGENTS).register(InProcessProvider(config.provider_name))
