"""Loader plugin providing `ctx.get(COMPACTION)` and the `/compact [focus]` command.

Row: `{id: compaction, name: acp_agent.compaction.plugin, config: {compactAt: 0.8,
keepRecentTokens: 20000}}`. `/compact` joins the command list when the composition has one (the
commands row comes first). Without the row nothing compacts (a `compaction` in a loaded log is
still honoured: the event type is a core one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from acp_agent.agent.keys import COMPACTION
from acp_agent.commands.builtins import reply
from acp_agent.commands.registry import COMMANDS, Command, CommandRegistry, Invocation
from acp_agent.compaction import texts
from acp_agent.compaction.compactor import Compactor
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.events import COMMAND_SOURCE, TurnCompleted, TurnEndReason

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket

name = "compaction"
inject = ("llm", "agents")


class Config(PluginConfig):
    compact_at: float = Field(default=0.8, gt=0, le=1)
    """Compact before a model call whose estimated input passes this share of the agents row's
    `contextWindow`."""
    keep_recent_tokens: int = Field(default=20000, ge=0)
    """How much of the most recent user messages (estimated tokens) a compaction keeps verbatim."""


def command(compactor: Compactor) -> Command:
    """`/compact [focus]`: a turn that compacts the history now (the focus steers the summary);
    with nothing to compact it answers so, without calling the model."""

    def run(invocation: Invocation) -> Ticket:
        focus = invocation.arguments or None

        async def body(agent: Agent, turn: int) -> TurnEndReason:
            if not compactor.possible(agent):
                return await reply(texts.NOTHING_TO_COMPACT)(agent, turn)
            await compactor.compact(agent, "command", focus)
            return TurnCompleted()

        return invocation.followup(invocation.content, COMMAND_SOURCE, body)

    return Command("compact", texts.COMMAND_DESCRIPTION, run, texts.COMMAND_HINT)


def apply(ctx: Context, config: Config) -> Disposer:
    compactor = Compactor(compact_at=config.compact_at, keep_recent_tokens=config.keep_recent_tokens)
    commands: CommandRegistry | None = ctx.find(COMMANDS)
    return combine(
        ctx.provide(COMPACTION, compactor),
        *([commands.add(command(compactor))] if commands is not None else []),
    )
