"""The `hook/run` event: one hook's run, logged whatever it decided (free, written `ignorable`)."""

from __future__ import annotations

from typing import Any, Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

HOOK_RUN_EVENT: Final = "hook/run"


class HookRunData(Model):
    event: str
    source: str
    """The file that configured the hook."""
    command: str
    exit_code: int | None
    """None: it timed out or did not start."""
    decision: str | None = None
    duration_ms: int
    error: str | None = None
    """A non-blocking failure: its exit code and stderr, a timeout, output that is not JSON."""
    updated_input: dict[str, Any] | None = None
    """The arguments a PreToolUse hook put in place of the model's."""


class HookRunEvent(SessionEvent):
    type: Literal["hook/run"] = HOOK_RUN_EVENT
    data: HookRunData
