"""The session modes: how much a session lets tools that need approval do."""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model

ModeId = Literal["ask", "auto", "plan"]

ASK: Final = "ask"
AUTO: Final = "auto"
PLAN: Final = "plan"


class ModeInfo(Model):
    """A mode as an editor lists it."""

    id: ModeId
    name: str
    description: str


MODES: Final = (
    ModeInfo(id=ASK, name="Ask", description="Ask before running commands or changing files"),
    ModeInfo(id=AUTO, name="Auto", description="Change files without asking; still ask before running commands"),
    ModeInfo(id=PLAN, name="Plan", description="Read-only: explore and plan, with no commands and no file changes"),
)
MODE_IDS: Final[tuple[str, ...]] = tuple(mode.id for mode in MODES)
