"""Loader plugin providing `COMMANDS`: the built-in slash commands and the user's command files.

Row: `{id: commands, name: acp_agent.commands.plugin}`. It registers the `command/reply` event type
(invariant class `turn`) and the built-in `/init` (`/compact` is the compaction plugin's).
"""

from __future__ import annotations

from acp_agent.commands.builtins import BUILTINS
from acp_agent.commands.events import CommandReplyEvent
from acp_agent.commands.registry import COMMANDS, CommandRegistry
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.persistence import SESSIONS

name = "commands"
inject = ("sessions",)


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    registry = CommandRegistry()
    return combine(
        ctx.get(SESSIONS).registry.register(CommandReplyEvent, "turn"),
        ctx.provide(COMMANDS, registry),
        *(registry.add(command) for command in BUILTINS),
    )
