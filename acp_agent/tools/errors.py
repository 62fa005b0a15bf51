"""Errors of the tools package (tool failures are results, not exceptions: see pipeline.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp_agent.tools import texts


class ToolsError(Exception):
    """Base class of the tools package's errors."""


class DuplicateTool(ToolsError):
    """Raised when a tool name is registered twice for the same owner (or twice globally)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"a tool named {name!r} is already registered for this owner")
        self.name = name


class OutsideWorkspace(ToolsError):
    """Raised when a file tool's path resolves outside the session's working directory (`roots`:
    it alone), or outside every root of the session (`among`: its cwd and additional directories)."""

    def __init__(self, path: str, roots: Sequence[Path], *, through_link: bool = False) -> None:
        super().__init__(texts.outside(path, roots, through_link))
        self.path = path
        self.roots = tuple(roots)
        self.through_link = through_link
        """A symbolic link on the way led out (the path itself is inside)."""

    def among(self, roots: Sequence[Path]) -> OutsideWorkspace:
        """The same refusal, naming `roots`: all the roots the path was looked for in."""
        return OutsideWorkspace(self.path, roots, through_link=self.through_link)


class NotOwned(PermissionError):
    """Raised when a file tool would replace a file that belongs to another user."""


class CommandNotStarted(ToolsError):
    """Raised when a command's shell cannot start: its working directory was removed (or is not
    one), the shell is missing, or the command is longer than the system takes as an argument."""


class TerminalFailed(ToolsError):
    """Raised when the editor refused a terminal request or answered it with something that is not
    an answer (`CommandRunner` through the client's `terminal/*`); the call fails with this message."""


class ScratchGone(ToolsError):
    """Raised when a path names a session's scratch directory that was removed (it closed)."""


class BinaryFile(ToolsError):
    """Raised when read_file meets a NUL byte in the first 8 KiB it reads (`texts.BINARY_PROBE`)."""


__all__ = [
    "BinaryFile",
    "CommandNotStarted",
    "DuplicateTool",
    "NotOwned",
    "OutsideWorkspace",
    "ScratchGone",
    "TerminalFailed",
    "ToolsError",
]
