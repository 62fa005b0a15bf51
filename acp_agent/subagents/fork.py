"""The `fork` provider: a child seeded with the parent's completed turns. Loader plugin.

The parent's current turn is open (it holds the very tool call that forks), so the seed is the
balanced prefix up to the parent's last `turn/end`; on its first turn a parent forks an empty seed.
"""

from __future__ import annotations

from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.session.log import completed_turn_prefix
from acp_agent.subagents.driver import InProcessRun, start_in_process_run
from acp_agent.subagents.registry import SubagentRegistry, SubagentRequest
from acp_agent.subagents.spawn import ALL
from acp_agent.subagents.registry import SUBAGENTS


class ForkProvider:
    capabilities = ALL

    def __init__(self, name: str = "fork") -> None:
        self.name = name

    async def start(self, request: SubagentRequest) -> InProcessRun:
        return await start_in_process_run(request, seed=completed_turn_prefix(request.parent.session.events))


name = "fork"
inject = ("subagents",)


class Config(PluginConfig):
    provider_name: str = "fork"


def apply(ctx: Context, config: Config) -> Disposer:
    registry: SubagentRegistry = ctx.get(SUBAGENTS)
    return registry.register(ForkProvider(config.provider_name))
