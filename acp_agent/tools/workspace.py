"""Where the file tools read and write: the disk by default, or whatever the `workspace` service
picks for a call (the editor's buffers, through ACP's `fs/*` methods, once the ACP layer provides
one). Nothing here knows ACP.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Final

import anyio.to_thread

from acp_agent.kernel.context import ServiceKey
from acp_agent.tools import confined
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.confined import Target
from acp_agent.tools.lines import Lines, Window, read_window


class Workspace(ABC):
    """Text file access for the file tools, on targets checked to lie inside the session's cwd.
    Failures are OSErrors: `FileNotFoundError` when there is no such file, `IsADirectoryError`
    for a directory; text that is not UTF-8 raises `UnicodeDecodeError`."""

    @abstractmethod
    async def read_lines(self, target: Target, window: Window) -> Lines:
        """The lines of `window`, reading no more of the file than they need (`lines.read_window`);
        a file whose first bytes hold a NUL raises `BinaryFile`."""

    @abstractmethod
    async def read_text(self, target: Target) -> str:
        """The file's whole text, exactly as stored (no newline translation)."""

    @abstractmethod
    async def write_text(self, target: Target, text: str) -> None:
        """Create or replace the file with `text`, creating missing parent directories."""


WorkspaceProvider = Callable[[ToolCallContext], Workspace]
"""Picks the workspace of one call (it knows the call's session, route and cwd)."""

WORKSPACE_SERVICE: Final = ServiceKey[WorkspaceProvider]("workspace")
"""The context service a composition may provide (the ACP layer's client files)."""


class DiskWorkspace(Workspace):
    """The files on disk, as UTF-8, reached through `confined` (from a descriptor of the cwd,
    following no symbolic link) in a worker thread, so a large file never blocks the event loop.

    A write is not cancellable once started (`to_thread.run_sync` waits for its thread), and the
    tool logs its diff right after it without a checkpoint between: a cancellation cannot separate
    a change on disk from the diff that shows it.
    """

    async def read_lines(self, target: Target, window: Window) -> Lines:
        return await anyio.to_thread.run_sync(_read_lines, target, window)

    async def read_text(self, target: Target) -> str:
        data = await anyio.to_thread.run_sync(confined.read_bytes, target)
        return data.decode("utf-8")

    async def write_text(self, target: Target, text: str) -> None:
        await anyio.to_thread.run_sync(confined.replace, target, text.encode("utf-8"))


def _read_lines(target: Target, window: Window) -> Lines:
    with os.fdopen(confined.open_read(target), "rb", buffering=0) as file:
        return read_window(file.read, window)


DISK: Final[Workspace] = DiskWorkspace()


def workspace_for(call: ToolCallContext) -> Workspace:
    """The workspace `call` goes through: the `workspace` service's pick, else the disk."""
    return call.pick(WORKSPACE_SERVICE, DISK)
