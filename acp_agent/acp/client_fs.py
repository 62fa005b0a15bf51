"""The file tools' `Workspace` through the editor: ACP `fs/read_text_file` and `fs/write_text_file`.

A client that advertises `fs.readTextFile` serves reads from its buffers (unsaved changes
included); one that advertises `fs.writeTextFile` takes writes into them (the edit lands in the
editor, with its undo history). Each half goes to the disk when it is not advertised, so a client
that only reads gets editor reads and disk writes. `read_file` asks for its window only (`line`,
`limit`: one line more than it returns, to know whether lines remain); `edit_file` and
`write_file` read the whole text. Requests name the top-level session on the wire
(a child's calls show there) and an absolute path.
"""

from __future__ import annotations

import errno
import io
from typing import TypeVar

import anyio.to_thread
from pydantic import ValidationError

from acp_agent.acp.connection import Connection
from acp_agent.acp.errors import RESOURCE_NOT_FOUND, ClientError
from acp_agent.acp.schema import Incoming, ReadTextFileParams, ReadTextFileResult, WriteTextFileParams
from acp_agent.tools import confined
from acp_agent.tools.confined import Target
from acp_agent.tools.lines import Lines, Window, read_window
from acp_agent.tools.workspace import DISK, Workspace

READ = "fs/read_text_file"
WRITE = "fs/write_text_file"

R = TypeVar("R", bound=Incoming)


class ClientWorkspace(Workspace):
    """Reads and writes of one session's calls: through the client where it advertised the
    method, else the disk.

    A client's error answer becomes the OSError the file tools report: `FileNotFoundError` for a
    read the client answers "resource not found" (-32002), or any failed read of a path the disk
    has no file at (clients word a missing file in their own way); `IsADirectoryError` when the
    path is a directory; else an `OSError` (EIO) quoting the client.
    """

    def __init__(self, conn: Connection, session_id: str, *, read: bool, write: bool) -> None:
        self.conn = conn
        self.session_id = session_id
        """The session on the wire (a child's calls go to its top-level session)."""
        self.read = read
        self.write = write

    async def read_lines(self, target: Target, window: Window) -> Lines:
        if not self.read:
            return await DISK.read_lines(target, window)
        # One line more than the window: whether lines remain, without asking for the rest.
        params = ReadTextFileParams(
            session_id=self.session_id, path=str(target.path), line=window.start, limit=window.count + 1
        )
        result = await self._ask(READ, params.dump(), target)
        content = _parse(ReadTextFileResult, result, READ).content.encode("utf-8")
        lines = read_window(io.BytesIO(content).read, window, skip=0)
        if lines.total is None:
            return lines
        # The end of the answer is the end of the file, unless there was nothing from `start` on.
        total = window.start - 1 + lines.total if lines.total or window.start == 1 else None
        return Lines(lines.lines, more=False, total=total)

    async def read_text(self, target: Target) -> str:
        if not self.read:
            return await DISK.read_text(target)
        params = ReadTextFileParams(session_id=self.session_id, path=str(target.path))
        result = await self._ask(READ, params.dump(), target)
        return _parse(ReadTextFileResult, result, READ).content

    async def write_text(self, target: Target, text: str) -> None:
        if not self.write:
            return await DISK.write_text(target, text)
        # The Workspace contract creates missing parents; ACP does not say whether a client does.
        await anyio.to_thread.run_sync(confined.make_parents, target)
        params = WriteTextFileParams(session_id=self.session_id, path=str(target.path), content=text)
        await self._ask(WRITE, params.dump(), target)

    async def _ask(self, method: str, params: dict[str, object], target: Target) -> object:
        try:
            return await self.conn.request(method, params)
        except ClientError as exc:
            raise _os_error(method, exc, target) from None


def _os_error(method: str, exc: ClientError, target: Target) -> OSError:
    """The OSError a file tool reports for the client's error answer to `method` on `target`."""
    path = str(target.path)
    kind = confined.kind(target)
    if kind == "directory":
        return IsADirectoryError(errno.EISDIR, "is a directory", path)
    if method == READ and (exc.code == RESOURCE_NOT_FOUND or kind is None):
        return FileNotFoundError(errno.ENOENT, "no such file", path)
    return OSError(errno.EIO, f"the editor answered {method} with error {exc.code}: {exc.message}", path)


def _parse(model: type[R], result: object, method: str) -> R:
    try:
        return model.model_validate(result)
    except ValidationError:
        raise OSError(errno.EIO, f"the editor's answer to {method} is not valid: {str(result)[:200]}") from None
