"""The `fork` provider: a child seeded with the parent's completed turns. Loader plugin.

The parent's current turn is open (it holds the very tool call that forks), so the seed is the
balanced prefix up to the parent's last `turn/end`; on its first turn a parent forks an empty seed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.session.events import SessionEvent
from acp_agent.session.log import completed_turn_prefix
from acp_agent.subagents.driver import InProcessProvider
from acp_agent.subagents.registry import SUBAGENTS

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent


def completed_turns(parent: Agent) -> list[SessionEvent]:
    """A forked child's seed: the parent's log up to its last `turn/end`, every chunk included
    (read back from the parent's file)."""
    return completed_turn_prefix(parent.session.all_events())


name = "fork"
inject = ("subagents",)


class Config(PluginConfig):
    provider_name: str = "fork"


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.get(SUBAGENTS).register(InProcessProvider(config.provider_name, seed=completed_turns))
