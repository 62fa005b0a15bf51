"""The `spawn` provider: a fresh child with no inherited conversation. Loader plugin."""

from __future__ import annotations

from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.subagents.driver import InProcessProvider
from acp_agent.subagents.registry import SUBAGENTS

name = "spawn"
inject = ("subagents",)


class Config(PluginConfig):
    provider_name: str = "spawn"


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.get(SUBAGENTS).register(InProcessProvider(config.provider_name))
