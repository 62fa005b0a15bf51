"""Every text of the hooks package that a user or the model reads."""

from __future__ import annotations

from typing import Final

NO_REASON: Final = "blocked by a hook"
NOT_JSON: Final = "its output is not a JSON object"
STOP_LIMIT: Final = 8
"""Stop (or SubagentStop) blocks in a row after which the turn ends anyway."""


def timed_out(seconds: float) -> str:
    return f"timed out after {seconds:g} s"


def failed(exit_code: int | None, stderr: str) -> str:
    how = "did not start" if exit_code is None else f"exited with {exit_code}"
    detail = stderr.strip()
    return f"{how}: {detail}" if detail else how


def denied(tool: str, reason: str) -> str:
    """The result of a call a PreToolUse hook denied (the model reads it after `Error: `)."""
    return f"a hook refused '{tool}': {reason}"


def result_blocked(tool: str, reason: str) -> str:
    """What the model reads instead of the result when a PostToolUse hook blocks it."""
    return f"a hook blocked the result of '{tool}': {reason}"


def prompt_blocked(reason: str) -> str:
    return f"A hook blocked this prompt: {reason}"


def turn_stopped(reason: str) -> str:
    return f"A hook stopped the turn: {reason}" if reason else "A hook stopped the turn."


def stop_limit(count: int) -> str:
    return f"A Stop hook blocked the end of the turn {count} times in a row; the turn ends here."


def hook_context(event: str, text: str) -> str:
    """A hook's additional context, as the model reads it."""
    return f'<hook-context event="{event}">\n{text}\n</hook-context>'


HOOKS_DESCRIPTION: Final = "List the hooks this session runs, and where they come from"


def bad_input(tool: str, exc: Exception) -> str:
    return f"a hook replaced the arguments of '{tool}' with invalid ones: {exc}"
