"""The `skills/update` event: the skill catalog an agent's model sees, whenever it changes."""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

SKILLS_EVENT: Final = "skills/update"


class SkillsData(Model):
    text: str
    """The catalog section exactly as the model sees it ("": none)."""
    skills: list[str]
    """The names of every skill of the session (the user's commands included)."""


class SkillsEvent(SessionEvent):
    """`skills/update`: free, written `ignorable` (model-visible means logged)."""

    type: Literal["skills/update"] = SKILLS_EVENT
    data: SkillsData
