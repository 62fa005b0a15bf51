"""The `instructions/update` event: the project instructions section, whenever it changes."""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

INSTRUCTIONS_EVENT: Final = "instructions/update"


class InstructionFile(Model):
    path: str
    size: int
    shown: int


class InstructionsData(Model):
    text: str
    """The section exactly as the model sees it ("": no instructions any more)."""
    files: list[InstructionFile]


class InstructionsEvent(SessionEvent):
    """`instructions/update`: logged before a turn whose instructions differ from the last ones
    logged (model-visible means logged). Free (outside turns), written `ignorable`."""

    type: Literal["instructions/update"] = INSTRUCTIONS_EVENT
    data: InstructionsData
