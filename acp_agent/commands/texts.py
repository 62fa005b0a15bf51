"""The commands' texts: what the user reads in the editor's command menu, and the model-visible
prompt of `/init` (tested verbatim)."""

from __future__ import annotations

INIT_DESCRIPTION = "Write an AGENTS.md with instructions for agents working in this repository"
INIT_PROMPT = (
    "Write an AGENTS.md file in the current working directory: the instructions a coding agent "
    "needs to work well in this repository. First look around: read the README, the build, test "
    "and CI configuration, and any instructions already written for agents or contributors "
    "(AGENTS.md, CLAUDE.md, CONTRIBUTING.md, .cursorrules, .github/copilot-instructions.md). "
    "Then write down, briefly and specifically for this repository: how to install, build, test "
    "and lint (the exact commands, including how to run a single test); how the code is "
    "organized; the conventions a change must follow (style, naming, tests, commit messages); "
    "and anything surprising a newcomer would trip over. Leave out generic advice that holds for "
    "any project. If an AGENTS.md already exists, improve it instead of starting over. Say what "
    "you wrote when you are done."
)
"""The prompt `/init` sends (model-visible); text typed after `/init` follows it after a blank line."""

FILE_INPUT_HINT = "what to put in place of $ARGUMENTS"
"""The input hint of a command file that takes input and names no `argument-hint` of its own."""

RENAME_DESCRIPTION = "Rename this thread"
RENAME_INPUT_HINT = "the new title"
RENAME_USAGE = "Type the new title after /rename, for example `/rename Fix the login bug`."


def renamed(title: str) -> str:
    """`/rename`'s answer, once the title is logged."""
    return f"Renamed this thread to “{title}”."
