"""`ctx.get(SKILLS)`: each session's skills, as a catalog, a tool and slash commands.

A top-level session's skills are found when its agent is published (new, load, resume): a skill
added later shows in the next session. Each agent of the thread (children included) gets, before
its turns, the catalog of the skills the model may load as a system-prompt section (logged as
`skills/update` when it differs from the last one its log holds) and the `skill` tool; the
session offers `/<name>` for each skill the user may run (a name a command already has is left
to that command).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final
from weakref import WeakKeyDictionary, WeakSet

from pydantic import Field

from acp_agent.agent.calling import calling_agent
from acp_agent.agent.keys import AGENTS, PROMPT
from acp_agent.agent.prompt import Section
from acp_agent.commands.files import CommandFile
from acp_agent.commands.registry import COMMANDS, Command, Invocation
from acp_agent.kernel.context import Context, ServiceKey
from acp_agent.kernel.scope import Scope
from acp_agent.session.content import TextContent
from acp_agent.skills import texts
from acp_agent.skills.events import SkillsData, SkillsEvent
from acp_agent.skills.files import Skill, find_skills
from acp_agent.tools.base import Tool, ToolCallContext, ToolParams, ToolPresentation, ToolResult
from acp_agent.tools.registry import TOOLS

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket


class SkillParams(ToolParams):
    """Arguments of the skill tool."""

    name: str = Field(description="The skill's name, as the catalog lists it.")


class SkillTool(Tool[SkillParams]):
    """Loads a skill of the calling agent's thread."""

    name = "skill"
    description = texts.TOOL_DESCRIPTION
    Params = SkillParams
    concurrency_safe = True

    def __init__(self, skills: Skills) -> None:
        self._skills = skills

    async def run(self, params: SkillParams, call: ToolCallContext) -> ToolResult:
        offered = {s.name: s for s in self._skills.of(calling_agent(call)).values() if s.model_invocable}
        skill = offered.get(params.name)
        if skill is None:
            return ToolResult.failure(texts.unknown(params.name, sorted(offered)), "unknown_skill")
        return ToolResult.text(texts.loaded(skill))

    def present(self, params: SkillParams) -> ToolPresentation:
        return ToolPresentation(title=f"Load skill {params.name}", kind="read")


class Skills:
    def __init__(self, ctx: Context, home: Callable[[], Path] = Path.home) -> None:
        self._ctx = ctx
        self._home = home
        self.tool = SkillTool(self)
        self._found: WeakKeyDictionary[Scope, dict[str, Skill]] = WeakKeyDictionary()
        """Per top-level agent: its thread's skills."""
        self._installed: WeakSet[Scope] = WeakSet()

    def of(self, agent: Agent) -> dict[str, Skill]:
        return self._found.get(self._ctx.get(AGENTS).top_level(agent).scope, {})

    def published(self, agent: Agent) -> None:
        """Find a top-level session's skills, and offer its user's commands."""
        if agent.session.header.parent_session is not None:
            return
        cwd = Path(agent.session.cwd) if agent.session.cwd else None
        found = self._found[agent.scope] = find_skills(cwd, self._home())
        commands = self._ctx.find(COMMANDS)
        if commands is None:
            return
        taken = {command.name for command in commands.commands(agent)}
        for skill in found.values():
            if skill.user_invocable and skill.name not in taken:
                commands.add(_command(skill), owner=agent.scope)

    def refresh(self, agent: Agent) -> None:
        """Before a turn: the catalog and the tool for the agent, once; the catalog logged when
        it differs from the last one its log holds."""
        if agent.scope in self._installed:
            return
        self._installed.add(agent.scope)
        found = self.of(agent)
        loadable = sorted((skill for skill in found.values() if skill.model_invocable), key=lambda skill: skill.name)
        text = texts.catalog(loadable) if loadable else ""
        if text != _last_logged(agent):
            agent.session.append(SkillsEvent, SkillsData(text=text, skills=sorted(found)), ignorable=True)
        if loadable:
            self._ctx.get(PROMPT).add(
                Section(order=texts.SKILLS_ORDER, name="skills", text=text, literal=True), owner=agent.scope
            )
            self._ctx.get(TOOLS).register(self.tool, owner=agent.scope)


def _command(skill: Skill) -> Command:
    template = CommandFile(skill.name, skill.directory, skill.description, texts.loaded(skill), None)

    def run(invocation: Invocation) -> Ticket:
        prompt = TextContent(text=template.prompt(invocation.arguments))
        return invocation.followup([prompt, *invocation.attachments])

    return Command(skill.name, skill.description, run, texts.SKILL_HINT)


def _last_logged(agent: Agent) -> str:
    for event in reversed(agent.session.events):
        if isinstance(event, SkillsEvent):
            return event.data.text
    return ""


SKILLS: Final = ServiceKey[Skills]("skills")
"""`ctx.get(SKILLS)`: each session's skills."""
