"""`ctx.get(COMMANDS)`: the slash commands a session offers, and what runs when one is typed."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from acp_agent.commands.files import CommandFile, command_files
from acp_agent.config_dir import config_dir
from acp_agent.kernel.context import ServiceKey
from acp_agent.kernel.scope import Disposer, Scope
from acp_agent.session.content import ContentBlock, TextContent

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket, TurnBody

_TYPED = re.compile(r"/(\S+)(?:\s+(.*))?", re.DOTALL)
"""A prompt that starts a command: `/name`, then optionally whitespace and its input."""


class Invocation(NamedTuple):
    """A command as typed: which, by whom, with what."""

    agent: Agent
    command: Command
    arguments: str
    """What followed the command's name, stripped ("" for none)."""
    content: Sequence[ContentBlock]
    """The whole prompt as the client sent it (the command's text block first)."""
    hold: bool = False
    """Passed on to `Agent.followup` (the client layer answers the prompt before the next turn)."""

    @property
    def attachments(self) -> list[ContentBlock]:
        """The prompt's other blocks (files the user attached after typing the command)."""
        return list(self.content[1:])

    def followup(self, content: Sequence[ContentBlock], source: str = "user", body: TurnBody | None = None) -> Ticket:
        """Queue the command's turn on the agent (`Agent.followup`, held as the prompt asked)."""
        return self.agent.followup(content, source, body, hold=self.hold)


CommandRun = Callable[[Invocation], "Ticket"]
"""What a command does: queue the turn it stands for (`invocation.followup`, with a `body` for a
turn that does not call the model) and return its ticket."""


class Command(NamedTuple):
    """A slash command: its name (without `/`), the description the editor's menu shows, the hint
    shown while its input is empty (None: it takes no input), and what it runs."""

    name: str
    description: str
    run: CommandRun
    input_hint: str | None = None


@dataclass(frozen=True, eq=False)
class _Entry:
    command: Command
    owner: Scope | None


class CommandRegistry:
    """The commands each session offers: those plugins register (built-ins, `/mcp`, ...) and the
    user's command files, re-read each time the list is asked for.

    A registered command shadows a command file of the same name. Of several registrations of one
    name, the latest wins (a plugin replacing a built-in registers the same name); disposing it
    brings the earlier one back. A registration with an `owner` (an agent's scope) is that agent's
    alone and goes with its scope.
    """

    def __init__(self, config: Callable[[], Path] = config_dir) -> None:
        self._config = config
        self._entries: list[_Entry] = []
        self._listeners: list[Callable[[], None]] = []

    def add(self, command: Command, *, owner: Scope | None = None) -> Disposer:
        """Offer `command` (to every session, or to the agent whose scope is `owner`) until the
        returned disposer runs. Listeners hear of the change either way."""
        entry = _Entry(command, owner)
        self._entries.append(entry)
        self._changed()

        def remove() -> None:
            if entry in self._entries:
                self._entries.remove(entry)
                self._changed()

        return owner.add(remove) if owner is not None else remove

    def on_change(self, listener: Callable[[], None]) -> Disposer:
        """Call `listener` whenever a registration comes or goes (a sender re-checks its lists)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def commands(self, agent: Agent) -> list[Command]:
        """What `agent`'s session offers now, sorted by name (command files re-read)."""
        offered: dict[str, Command] = {name: self._from_file(file) for name, file in self._files(agent).items()}
        for entry in self._entries:  # in registration order: the latest of a name wins
            if entry.owner is None or entry.owner is agent.scope:
                offered[entry.command.name] = entry.command
        return [offered[name] for name in sorted(offered)]

    def start(self, agent: Agent, content: Sequence[ContentBlock], *, hold: bool = False) -> Ticket:
        """Queue the turn a prompt stands for: the command it starts with (`/name input`, one the
        session offers), else the prompt itself as typed (an unknown `/name` included). `hold`
        as in `Agent.followup`."""
        typed = _typed(content)
        if typed is not None:
            name, arguments = typed
            for command in self.commands(agent):
                if command.name == name:
                    return command.run(Invocation(agent, command, arguments, content, hold))
        return agent.followup(content, hold=hold)

    def _files(self, agent: Agent) -> dict[str, CommandFile]:
        cwd = agent.session.cwd
        return command_files(Path(cwd) if cwd else None, self._config())

    def _from_file(self, file: CommandFile) -> Command:
        def run(invocation: Invocation) -> Ticket:
            prompt = TextContent(text=file.prompt(invocation.arguments))
            return invocation.followup([prompt, *invocation.attachments])

        return Command(file.name, file.description, run, file.input_hint)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()


def _typed(content: Sequence[ContentBlock]) -> tuple[str, str] | None:
    """The command name and its input when the prompt's first block is text starting with `/`."""
    first = content[0] if content else None
    if not isinstance(first, TextContent):
        return None
    match = _TYPED.fullmatch(first.text)
    if match is None:
        return None
    return match[1], (match[2] or "").strip()


COMMANDS: Final = ServiceKey[CommandRegistry]("commands")
"""`ctx.get(COMMANDS)`: the slash commands each session offers."""
