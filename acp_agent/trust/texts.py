"""Every text of the trust question, its answers and `/trust`."""

from __future__ import annotations

from pathlib import Path
from typing import Final

TRUST_DESCRIPTION: Final = "Show whether this project is trusted; `/trust revoke` forgets a saved trust"
TRUST_HINT: Final = "revoke (optional)"
ALLOW_ONCE: Final = "Trust for this session"
ALLOW_ALWAYS: Final = "Always trust this project"
REJECT: Final = "Do not trust"


def question(project: Path) -> str:
    return f"Trust the project {project}?"


def explained(project: Path) -> str:
    return (
        f"{project} configures what would run on this machine or widen what the agent may do "
        "without asking. Trust it only if you trust its authors."
    )


def untrusted(project: Path) -> str:
    return (
        f"The project {project} is not trusted: its hooks, MCP servers and allow rules are ignored "
        "in this session (its deny and ask rules still apply)."
    )


def status(project: Path, trusted: bool | None, saved: bool) -> str:
    if trusted is None:
        return f"The project {project} waits for your answer to the trust question."
    if not trusted:
        return untrusted(project)
    how = "for good (saved)" if saved else "for this session"
    return f"The project {project} is trusted {how}."


def revoked(project: Path, was_saved: bool) -> str:
    if not was_saved:
        return f"The project {project} had no saved trust."
    return f"The saved trust of {project} is revoked: the next session asks again."
