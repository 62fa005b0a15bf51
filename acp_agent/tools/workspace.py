"""Where the file tools read and write: the disk by default, or whatever the `workspace` service
picks for a call (the editor's buffers, through ACP's `fs/*` methods, once the ACP layer provides
one). Nothing here knows ACP.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

from acp_agent.tools.base import ToolCallContext

WORKSPACE_SERVICE = "workspace"
"""The context service a composition may provide: a `WorkspaceProvider`."""


class Workspace(ABC):
    """Text file access for the file tools. Paths are absolute, in the session cwd's terms, and
    already checked to lie inside it. Failures are OSErrors: `FileNotFoundError` when there is no
    such file, `IsADirectoryError` for a directory; text that is not UTF-8 raises
    `UnicodeDecodeError`."""

    @abstractmethod
    async def read_text(self, path: Path) -> str:
        """The file's whole text, exactly as stored (no newline translation)."""

    @abstractmethod
    async def write_text(self, path: Path, text: str) -> None:
        """Create or replace the file with `text`, creating missing parent directories."""


WorkspaceProvider = Callable[[ToolCallContext], Workspace]
"""Picks the workspace of one call (it knows the call's session, route and cwd)."""


class DiskWorkspace(Workspace):
    """The files on disk, as UTF-8.

    Plain blocking I/O, on purpose: the files an agent reads and edits are source files that load
    in well under a millisecond, a worker thread per call would cost more than it saves, and with
    no checkpoint inside a write a cancellation cannot land between the write and the diff the
    tool logs for it.
    """

    async def read_text(self, path: Path) -> str:
        return path.read_bytes().decode("utf-8")

    async def write_text(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


DISK = DiskWorkspace()


def workspace_for(call: ToolCallContext) -> Workspace:
    """The workspace `call` goes through: the `workspace` service's pick, else the disk."""
    return call.pick(WORKSPACE_SERVICE, DISK)
