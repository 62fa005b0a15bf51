"""The model-visible texts of the project instructions section (tested verbatim)."""

from __future__ import annotations

INSTRUCTIONS_ORDER = 10
"""The section's place in the system prompt: after the persona (0), before a child's structured
output instruction (190)."""

HEADING = (
    "Instructions for working here, from AGENTS.md files (a directory's CLAUDE.md when it has "
    "none): the user's own first, then the project's, from its root down to the working "
    "directory. Follow them; when two disagree, the later (more specific) one wins."
)


def file_heading(path: str) -> str:
    return f"--- {path} ---"


def cut_note(hidden: int, path: str) -> str:
    """Ends a file cut at the size caps."""
    return f"[... {hidden} bytes of {path} not shown]"
