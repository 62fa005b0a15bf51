"""Which hooks a tool call (or a session's start) selects, as each dialect reads a `matcher`.

Claude Code: empty, absent or `*` matches everything; a plain word list (letters, digits, `_`,
separated by `|`) is a list of exact names; anything else is an unanchored regular expression.
Codex: empty or absent matches everything, anything else is an unanchored regular expression.
A tool is matched under its own name and under the names those tools give it (`ALIASES`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

Dialect = Literal["claude", "codex"]

ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "bash": ("Bash",),
    "read_file": ("Read",),
    "write_file": ("Write", "apply_patch"),
    "edit_file": ("Edit", "MultiEdit", "apply_patch"),
    "grep": ("Grep",),
    "glob": ("Glob",),
    "web_fetch": ("WebFetch",),
}
"""Our tool names -> the names Claude Code and Codex configurations use for the same tool (MCP
tools are `mcp__<server>__<tool>` in both, as ours)."""

FIELD_ALIASES: Final[dict[str, dict[str, str]]] = {
    "read_file": {"path": "file_path"},
    "write_file": {"path": "file_path"},
    "edit_file": {"path": "file_path", "old_text": "old_string", "new_text": "new_string"},
}
"""Our argument names -> the names Claude Code's tools give the same arguments, by our tool name
(`bash`, `grep`, `glob` and `web_fetch` name theirs as Claude Code does)."""


def hook_input(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as a hook reads them (`tool_input`): ours, and each again under the name
    Claude Code's tool gives it, so a script written for either reads what it expects."""
    aliases = FIELD_ALIASES.get(name, {})
    return {**arguments, **{alias: arguments[ours] for ours, alias in aliases.items() if ours in arguments}}


def from_hook_input(name: str, updated: dict[str, Any]) -> dict[str, Any]:
    """A hook's `updatedInput` in our argument names; a name Claude Code gives wins over ours, as
    the one a script written for it changed."""
    ours_of = {alias: ours for ours, alias in FIELD_ALIASES.get(name, {}).items()}
    plain = {key: value for key, value in updated.items() if key not in ours_of}
    return {**plain, **{ours_of[key]: value for key, value in updated.items() if key in ours_of}}


_WORDS = re.compile(r"[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*")


@dataclass(frozen=True)
class Matcher:
    """A compiled `matcher`: `words` (exact names) or `pattern` (searched), or neither (all)."""

    text: str
    words: frozenset[str] | None = None
    pattern: re.Pattern[str] | None = None

    @classmethod
    def parse(cls, text: str, dialect: Dialect) -> Matcher:
        """Raises `re.error` for an invalid regular expression."""
        if text in ("", "*") if dialect == "claude" else text == "":
            return cls(text)
        if dialect == "claude" and _WORDS.fullmatch(text):
            return cls(text, words=frozenset(text.split("|")))
        return cls(text, pattern=re.compile(text))

    def matches(self, names: tuple[str, ...]) -> bool:
        """Whether any of `names` (one subject under its several names) is selected."""
        if self.words is not None:
            return any(name in self.words for name in names)
        if self.pattern is not None:
            return any(self.pattern.search(name) for name in names)
        return True


def tool_names(name: str) -> tuple[str, ...]:
    """`name` and its aliases, the alias first: the name a hook script expects on its stdin."""
    return (*ALIASES.get(name, ()), name)
