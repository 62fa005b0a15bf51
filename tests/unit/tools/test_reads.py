"""Read before write: an existing file is changed only after the agent read it in its session, and
only as it read it; what the agent wrote itself counts as read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.tools import EditFileParams, EditFileTool, ReadFileParams, ReadFileTool, WriteFileParams, WriteFileTool

from .helpers import logged_call

pytestmark = pytest.mark.anyio

EDIT, WRITE, READ = EditFileTool(read_first=True), WriteFileTool(read_first=True), ReadFileTool()


def code(result: object) -> str | None:
    error = result.error
    return None if error is None else error.code


async def test_an_unread_file_is_refused_and_a_read_one_changes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    call = logged_call(tmp_path)
    edit = EditFileParams(path="a.txt", old_text="one", new_text="two")
    refused = await EDIT.run(edit, call)
    assert (
        refused.plain_text()
        == "Error: a.txt exists and you have not read it in this session: read it with read_file first, then change it"
    )
    assert await EDIT.preview(edit, call) is None
    assert code(await WRITE.run(WriteFileParams(path="a.txt", content="x\n"), call)) == "not_read"
    await READ.run(ReadFileParams(path="a.txt", limit=1), call)  # any window counts
    assert await EDIT.preview(edit, call) is not None
    assert code(await EDIT.run(edit, call)) is None
    assert (
        code(await EDIT.run(EditFileParams(path="a.txt", old_text="two", new_text="three"), call)) is None
    )  # its own write counts
    assert (tmp_path / "a.txt").read_text() == "three\n"
    assert (
        code(await EDIT.run(EditFileParams(path="a.txt", old_text="three", new_text="x"), logged_call(tmp_path)))
        == "not_read"
    )  # another session


async def test_a_file_changed_on_disk_since_it_was_read_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    call = logged_call(tmp_path)
    await READ.run(ReadFileParams(path="a.txt"), call)
    (tmp_path / "a.txt").write_text("one, and more\n")
    os.utime(tmp_path / "a.txt", ns=(1, 1))
    refused = await EDIT.run(EditFileParams(path="a.txt", old_text="one", new_text="two"), call)
    assert (
        refused.plain_text()
        == "Error: a.txt changed on disk since you last read it: read it again with read_file, then change it"
    )
    await READ.run(ReadFileParams(path="a.txt"), call)
    assert code(await EDIT.run(EditFileParams(path="a.txt", old_text="one", new_text="two"), call)) is None


async def test_a_new_file_needs_no_read_and_then_counts_as_read(tmp_path: Path) -> None:
    call = logged_call(tmp_path)
    assert code(await WRITE.run(WriteFileParams(path="new/b.txt", content="b\n"), call)) is None
    assert code(await WRITE.run(WriteFileParams(path="new/b.txt", content="c\n"), call)) is None
    call.scope.dispose()  # the session closed: what it read is forgotten
    assert (
        code(await EDIT.run(EditFileParams(path="new/b.txt", old_text="c", new_text="d"), logged_call(tmp_path)))
        == "not_read"
    )
