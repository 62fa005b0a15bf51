"""Loader plugin: the project instructions (AGENTS.md) as a system-prompt section of every agent.

Row: `{id: instructions, name: acp_agent.instructions.plugin}`. Before each turn of every agent
(children included) the files are read again; when the section differs from the last one the
agent's log holds, an `instructions/update` event logs it first; the section then replaces the
agent's previous one (owned by the agent's scope).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from acp_agent.agent.calling import calling_agent
from acp_agent.agent.keys import PROMPT
from acp_agent.agent.loop import TURN_STARTING
from acp_agent.agent.prompt import Section, SystemPrompt
from acp_agent.config_dir import config_dir
from acp_agent.instructions.events import InstructionFile, InstructionsData, InstructionsEvent
from acp_agent.instructions.files import instruction_files, nested_files, project_root, read_instructions
from acp_agent.instructions.texts import INSTRUCTIONS_ORDER
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, Scope, combine
from acp_agent.session.events import SessionEvent
from acp_agent.session.persistence import SESSIONS
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.pipeline import PreparedCall
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.roots import roots_of

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

name = "instructions"
inject = ("sessions", "prompt", "tools")
FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file"})
"""The tools whose file, under a subdirectory with instructions, makes them join."""


class Config(PluginConfig):
    pass


class ProjectInstructions:
    """Keeps each agent's instructions section as its files are now."""

    def __init__(self, prompt: SystemPrompt, config: Callable[[], Path] = config_dir) -> None:
        self._prompt = prompt
        self._config = config
        self._installed: WeakKeyDictionary[Scope, tuple[str, Disposer]] = WeakKeyDictionary()
        self._nested: WeakKeyDictionary[Scope, dict[Path, list[Path]]] = WeakKeyDictionary()
        """Per agent: the subdirectories whose instructions joined, as the agent read or edited a
        file under them, with their files."""
        self._logged: WeakKeyDictionary[Scope, str] = WeakKeyDictionary()
        """Per agent, the section its log holds last: the log is searched once per agent, not at
        every turn (a search that grew with the thread)."""

    def refresh(self, agent: Agent) -> None:
        """Read the files again; log the section if it changed, and give it to the agent."""
        cwd = Path(agent.session.cwd) if agent.session.cwd else None
        additional = roots_of(agent).additional
        joined = [path for files in self._nested.get(agent.scope, {}).values() for path in files]
        projects = [project_root(root) for root in ([] if cwd is None else [cwd, *additional])]
        found = read_instructions([*instruction_files(cwd, self._config(), additional), *joined], *projects)
        logged = self._logged.get(agent.scope)
        if found.text != (last_logged(agent.session.events) if logged is None else logged):
            files = [InstructionFile(path=f.path, size=f.size, shown=f.shown) for f in found.files]
            agent.session.append(InstructionsEvent, InstructionsData(text=found.text, files=files), ignorable=True)
        self._logged[agent.scope] = found.text
        installed = self._installed.pop(agent.scope, None)
        if installed is not None and installed[0] == found.text:
            self._installed[agent.scope] = installed
            return
        if installed is not None:
            installed[1]()
        if found.text:
            section = Section(order=INSTRUCTIONS_ORDER, name="instructions", text=found.text, literal=True)
            self._installed[agent.scope] = (found.text, self._prompt.add(section, owner=agent.scope))

    async def gate(self, call: PreparedCall, context: ToolCallContext) -> None:
        """Before a file tool's call: the instructions of the subdirectories of the cwd (or of an
        additional root) on the way to its file join the agent's section (logged), the first time one is reached, so the
        model sees them from its next step. Never answers the call."""
        path = getattr(call.params, "path", None)
        if call.block.name not in FILE_TOOLS or not isinstance(path, str):
            return None
        cwd = context.cwd.resolve()
        target = (cwd / path).resolve()
        nested = self._nested.setdefault(context.agent.scope, {})
        new = [
            (d, files)
            for root in (cwd, *context.roots.additional)
            for d, files in nested_files(root, target)
            if d not in nested
        ]
        if new:
            nested.update(new)
            self.refresh(calling_agent(context))
        return None


def last_logged(events: Sequence[SessionEvent]) -> str:
    """The section the log last recorded ("" when none): a loaded or forked session's included."""
    for event in reversed(events):
        if isinstance(event, InstructionsEvent):
            return event.data.text
    return ""


def apply(ctx: Context, config: Config) -> Disposer:
    instructions = ProjectInstructions(ctx.get(PROMPT))
    return combine(
        ctx.get(SESSIONS).registry.register(InstructionsEvent, "free"),
        ctx.events.on(TURN_STARTING, instructions.refresh),
        ctx.get(TOOLS).gate(None, instructions.gate),
    )
