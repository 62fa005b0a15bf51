"""The system prompt: ordered sections, global or owned by one agent's scope."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

from acp_agent.agent.keys import PROMPT
from acp_agent.kernel.models import Model
from acp_agent.kernel.scope import Disposer, Scope
from acp_agent.llm.request import ToolSchema
from acp_agent.session.events import SessionEvent

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

CLIENT_PROMPT_EVENT: Final = "session/system-prompt"
CLIENT_PROMPT_ORDER: Final = 1000
"""An appended client system prompt comes after the agent's own sections (the tool list aside)."""
PERSONA_SECTION: Final = "persona"
"""The name of the agent's own instructions (the agents row's `persona`): what `override` replaces."""
ClientPromptMode = Literal["append", "override"]


class ClientPromptData(Model):
    mode: ClientPromptMode
    text: str


class ClientPromptEvent(SessionEvent):
    """`session/system-prompt`: the system prompt the client gave the session as it was opened
    (free: logged between turns), model-visible from here on in this process."""

    type: Literal["session/system-prompt"] = CLIENT_PROMPT_EVENT
    data: ClientPromptData


class Section(NamedTuple):
    """One part of the system prompt. `{{name}}` placeholders are filled in when rendered, unless
    the section is `literal` (text the user wrote, such as project instructions, is sent as it is)."""

    order: int
    name: str
    text: str
    literal: bool = False


class SystemPrompt:
    """`ctx.get(PROMPT)`: sections sorted by order; an agent's own section shadows a global one of the
    same name (that is how a child gets its own persona)."""

    def __init__(self) -> None:
        self._sections: list[tuple[Section, Scope | None]] = []

    def add(self, section: Section, *, owner: Scope | None = None) -> Disposer:
        entry = (section, owner)
        self._sections.append(entry)

        def remove() -> None:
            if entry in self._sections:
                self._sections.remove(entry)

        return owner.add(remove) if owner is not None else remove

    def sections(self, owner: Scope | None) -> list[Section]:
        own = {section.name for section, scope in self._sections if scope is owner and owner is not None}
        chosen = [
            section
            for section, scope in self._sections
            if scope is owner or (scope is None and section.name not in own)
        ]
        return sorted(chosen, key=lambda section: section.order)

    def render(self, owner: Scope | None, variables: Mapping[str, str], tools: Sequence[ToolSchema]) -> str:
        parts = [
            section.text if section.literal else _fill(section.text, variables) for section in self.sections(owner)
        ]
        if tools:
            listing = "\n".join(f"- {t.name}: {t.description}" for t in tools)
            parts.append(_fill("Tools you can call:\n" + listing, variables))
        return "\n\n".join(parts)


def _fill(text: str, variables: Mapping[str, str]) -> str:
    for key, value in variables.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def use_client_prompt(agent: Agent, mode: ClientPromptMode, text: str) -> None:
    """Give `agent` the client's system prompt (for as long as the agent lives: a reopened
    session gets the one its request names): `append` after its own sections, or `override` in
    place of its own instructions (the persona: project instructions and tool list stay). Logged."""
    agent.session.append(ClientPromptEvent, ClientPromptData(mode=mode, text=text))
    if mode == "override":
        section = Section(order=0, name=PERSONA_SECTION, text=text, literal=True)
    else:
        section = Section(order=CLIENT_PROMPT_ORDER, name="client-system-prompt", text=text, literal=True)
    agent.ctx.get(PROMPT).add(section, owner=agent.scope)
