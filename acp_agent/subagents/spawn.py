"""The `spawn` provider: a fresh child with no inherited conversation. Loader plugin."""

from __future__ import annotations

from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.subagents.driver import InProcessRun, start_in_process_run
from acp_agent.subagents.registry import Capabilities, SubagentRegistry, SubagentRequest
from acp_agent.subagents.registry import SUBAGENTS

ALL = Capabilities(output_schema=True, depth_limit=True, tool_filter=True)


class SpawnProvider:
    capabilities = ALL

    def __init__(self, name: str = "spawn") -> None:
        self.name = name

    async def start(self, request: SubagentRequest) -> InProcessRun:
        return await start_in_process_run(request)


name = "spawn"
inject = ("subagents",)


class Config(PluginConfig):
    provider_name: str = "spawn"


def apply(ctx: Context, config: Config) -> Disposer:
    registry: SubagentRegistry = ctx.get(SUBAGENTS)
    return registry.register(SpawnProvider(config.provider_name))
