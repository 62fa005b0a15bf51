"""The session modes: permission presets, each saying what a call of a tool that needs approval
may do without asking and how its commands are confined (`acp_agent.sandbox`)."""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.sandbox.policy import FULL_ACCESS, READ_ONLY, WORKSPACE_WRITE, Kind

ModeId = Literal["ask", "auto", "plan", "full"]

ASK: Final = "ask"
AUTO: Final = "auto"
PLAN: Final = "plan"
FULL: Final = "full"


class ModeInfo(Model):
    """A mode as an editor lists it."""

    id: ModeId
    name: str
    description: str


MODES: Final = (
    ModeInfo(
        id=ASK, name="Ask", description="Ask before running commands (sandboxed to the project) or changing files"
    ),
    ModeInfo(
        id=AUTO,
        name="Auto",
        description="Run commands sandboxed to the project and change files without asking; ask to go beyond it",
    ),
    ModeInfo(
        id=PLAN,
        name="Read-only",
        description="Explore and plan: commands run in a read-only sandbox without asking; no file changes",
    ),
    ModeInfo(
        id=FULL, name="Full access", description="Run commands without a sandbox and change files, without asking"
    ),
)
MODE_IDS: Final[tuple[str, ...]] = tuple(mode.id for mode in MODES)

SANDBOX_OF: Final[dict[str, Kind]] = {PLAN: READ_ONLY, ASK: WORKSPACE_WRITE, AUTO: WORKSPACE_WRITE, FULL: FULL_ACCESS}
"""The file policy each mode runs commands under."""
