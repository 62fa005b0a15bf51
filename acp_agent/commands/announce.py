"""The sender of a session's command list: once the session is known, then whenever it changes."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from acp_agent.commands.registry import Command, CommandRegistry

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

log = logging.getLogger(__name__)

Shown = tuple[tuple[str, str, str | None], ...]


class Announcer:
    """Sends `agent`'s command list through `send` (the client layer's `available_commands_update`)
    at `start()`, which the client layer calls once its answer opening the session is out (an
    editor drops an update about a session it does not know yet), and then at each `refresh()`
    whose list differs from the last one sent: the start of each turn (command files are re-read)
    and any registration coming or going. Nothing is sent before `start()`, nor once the agent's
    scope is being disposed (its own commands going with it change no list anyone will read)."""

    def __init__(self, registry: CommandRegistry, agent: Agent, send: Callable[[Sequence[Command]], None]) -> None:
        self._registry = registry
        self._agent = agent
        self._send = send
        self._shown: Shown | None = None
        self._started = False

    def start(self) -> None:
        self._started = True
        self.refresh()

    def refresh(self) -> None:
        """Send the list if it changed. A list that cannot be made or sent (a bug, a command
        file that broke its parser) is logged and the last one sent stays: the session goes on."""
        if not self._started or self._agent.scope.disposed:
            return
        try:
            self._refresh()
        except Exception as exc:
            log.error("session %s: cannot announce its commands: %s", self._agent.id, exc, exc_info=exc)

    def _refresh(self) -> None:
        commands = self._registry.commands(self._agent)
        shown = tuple((command.name, command.description, command.input_hint) for command in commands)
        if shown != self._shown:
            self._shown = shown
            self._send(commands)
