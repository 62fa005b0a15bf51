"""Loader plugin providing `ctx.get(SUBAGENTS)`, the registry of subagent providers."""

from __future__ import annotations

from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.subagents.registry import SubagentRegistry
from acp_agent.subagents.registry import SUBAGENTS

name = "subagents"
inject = ("agents",)


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.provide(SUBAGENTS, SubagentRegistry())
