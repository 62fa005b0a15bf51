"""`ClientWorkspace`: the file tools' reads and writes through the editor (`fs/*`), each half only
when the client advertised it, and client errors as the OSErrors the tools report."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from acp_agent.acp.client_fs import ClientWorkspace
from acp_agent.acp.errors import ClientError
from acp_agent.tools import WORKSPACE_SERVICE, EditFileTool, ReadFileTool, Target, WriteFileTool, resolve_in
from acp_agent.tools.files import EditFileParams, ReadFileParams, WriteFileParams
from acp_agent.tools.lines import Lines, Window

from ..tools.helpers import call_context
from .fakes import FakeConnection

pytestmark = pytest.mark.anyio


def at(path: Path) -> Target:
    """`path` as the file tools hand it to a workspace (checked inside the cwd `/`)."""
    return resolve_in(Path("/"), str(path))


def workspace(conn: FakeConnection, *, read: bool = True, write: bool = True) -> ClientWorkspace:
    return ClientWorkspace(conn, "wire-session", read=read, write=write)  # type: ignore[arg-type]


async def test_a_read_asks_the_client_for_the_whole_file_of_the_top_level_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("on disk\n")
    conn = FakeConnection({"fs/read_text_file": {"content": "unsaved buffer\n", "_meta": {"x": 1}}})
    assert await workspace(conn).read_text(at(tmp_path / "a.txt")) == "unsaved buffer\n"
    assert conn.requests == [("fs/read_text_file", {"sessionId": "wire-session", "path": str(tmp_path / "a.txt")})]


async def test_a_write_goes_to_the_client_after_creating_missing_parent_directories(tmp_path: Path) -> None:
    conn = FakeConnection({"fs/write_text_file": None})
    target = tmp_path / "new" / "dir" / "b.txt"
    await workspace(conn).write_text(at(target), "text\n")
    assert conn.requests == [
        ("fs/write_text_file", {"sessionId": "wire-session", "path": str(target), "content": "text\n"})
    ]
    assert target.parent.is_dir() and not target.exists()  # the file itself is the client's to write


async def test_only_reads_advertised_reads_from_the_client_and_writes_to_the_disk(tmp_path: Path) -> None:
    conn = FakeConnection({"fs/read_text_file": {"content": "buffer"}})
    ws = workspace(conn, write=False)
    await ws.write_text(at(tmp_path / "sub" / "c.txt"), "written")
    assert (tmp_path / "sub" / "c.txt").read_text() == "written"
    assert await ws.read_text(at(tmp_path / "sub" / "c.txt")) == "buffer"
    assert conn.methods == ["fs/read_text_file"]


async def test_only_writes_advertised_reads_the_disk_and_writes_through_the_client(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("disk")
    conn = FakeConnection({"fs/write_text_file": {}})
    ws = workspace(conn, read=False)
    assert await ws.read_text(at(tmp_path / "d.txt")) == "disk"
    await ws.write_text(at(tmp_path / "d.txt"), "editor")
    assert conn.methods == ["fs/write_text_file"]
    assert (tmp_path / "d.txt").read_text() == "disk"


@pytest.mark.parametrize(
    ("code", "on_disk", "expected"),
    [
        (-32002, True, FileNotFoundError),  # the client says so, whatever the disk holds
        (-32603, False, FileNotFoundError),  # a client's own wording of a missing file
        (-32603, True, OSError),
    ],
)
async def test_a_read_error_is_the_oserror_the_file_tools_report(
    tmp_path: Path, code: int, on_disk: bool, expected: type[OSError]
) -> None:
    path = tmp_path / "e.txt"
    if on_disk:
        path.write_text("x")
    conn = FakeConnection({"fs/read_text_file": ClientError(code, "cannot open buffer")})
    with pytest.raises(OSError) as caught:
        await workspace(conn).read_text(at(path))
    assert type(caught.value) is expected
    if expected is OSError:
        assert caught.value.errno == errno.EIO
        assert caught.value.strerror == f"the editor answered fs/read_text_file with error {code}: cannot open buffer"


async def test_a_directory_is_a_directory_for_reads_and_writes(tmp_path: Path) -> None:
    conn = FakeConnection({m: ClientError(-32603, "is dir") for m in ("fs/read_text_file", "fs/write_text_file")})
    with pytest.raises(IsADirectoryError):
        await workspace(conn).read_text(at(tmp_path))
    with pytest.raises(IsADirectoryError):
        await workspace(conn).write_text(at(tmp_path), "x")


async def test_a_write_error_on_a_missing_file_is_an_io_error_not_a_missing_file(tmp_path: Path) -> None:
    conn = FakeConnection({"fs/write_text_file": ClientError(-32002, "read-only buffer")})
    with pytest.raises(OSError) as caught:
        await workspace(conn).write_text(at(tmp_path / "f.txt"), "x")
    assert type(caught.value) is OSError and caught.value.errno == errno.EIO
    assert "fs/write_text_file with error -32002: read-only buffer" in str(caught.value)


@pytest.mark.parametrize("answer", [None, {}, {"content": 5}, ["x"]])
async def test_an_answer_without_text_content_is_an_io_error(tmp_path: Path, answer: Any) -> None:
    conn = FakeConnection({"fs/read_text_file": answer})
    with pytest.raises(OSError) as caught:
        await workspace(conn).read_text(at(tmp_path / "g.txt"))
    assert caught.value.errno == errno.EIO and "the editor's answer to fs/read_text_file is not valid" in str(
        caught.value
    )


# -- through the file tools ----------------------------------------------------------------------


def editor_call(tmp_path: Path, conn: FakeConnection) -> Any:
    call = call_context(cwd=tmp_path)
    call.ctx.provide(WORKSPACE_SERVICE, lambda _call: workspace(conn))
    call.show = lambda **_: None  # type: ignore[method-assign]  # no session log here
    return call


async def test_the_file_tools_see_the_editors_buffers_and_report_its_errors(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('disk')\n")
    buffers = {str(tmp_path / "a.py"): "print('buffer')\n"}

    async def read(params: dict[str, Any]) -> Any:
        return {"content": buffers[params["path"]]} if params["path"] in buffers else {"content": ""}

    async def write(params: dict[str, Any]) -> Any:
        buffers[params["path"]] = params["content"]
        return {}

    conn = FakeConnection({"fs/read_text_file": [ClientError(-32002, "none"), read], "fs/write_text_file": write})
    call = editor_call(tmp_path, conn)
    created = await WriteFileTool().run(WriteFileParams(path="b.py", content="x = 1\n"), call)
    assert created.plain_text() == "Created b.py (1 line)."  # the first read answered "not found"
    result = await ReadFileTool().run(ReadFileParams(path="a.py"), call)
    assert result.plain_text() == "     1\tprint('buffer')"
    edit = EditFileParams(path="a.py", old_text="buffer", new_text="edited")
    assert not (await EditFileTool().run(edit, call)).is_error
    assert buffers[str(tmp_path / "a.py")] == "print('edited')\n"
    assert (tmp_path / "a.py").read_text() == "print('disk')\n"  # the editor saves when it likes

    conn.answers["fs/read_text_file"] = ClientError(-32603, "boom")
    failed = await ReadFileTool().run(ReadFileParams(path="a.py"), call)
    assert failed.error is not None and failed.error.code == "io_error"
    assert (
        failed.plain_text()
        == "Error: cannot access a.py: the editor answered fs/read_text_file with error -32603: boom"
    )


async def test_read_file_asks_the_editor_for_its_window_and_one_line_more(tmp_path: Path) -> None:
    window = Window(start=2, count=2, max_line_chars=100)
    conn = FakeConnection({"fs/read_text_file": {"content": "two\nthree\nfour\n"}})
    found = await workspace(conn).read_lines(at(tmp_path / "a.txt"), window)
    assert conn.requests == [
        ("fs/read_text_file", {"sessionId": "wire-session", "path": str(tmp_path / "a.txt"), "line": 2, "limit": 3})
    ]
    assert found == Lines(["two", "three"], more=True)
    conn.answers["fs/read_text_file"] = {"content": "two\n"}
    assert await workspace(conn).read_lines(at(tmp_path / "a.txt"), window) == Lines(["two"], more=False, total=2)
    conn.answers["fs/read_text_file"] = {"content": ""}  # nothing from line 2 on: how many lines is unknown
    assert await workspace(conn).read_lines(at(tmp_path / "a.txt"), window) == Lines([], more=False, total=None)
    start = Window(start=1, count=2, max_line_chars=100)
    assert await workspace(conn).read_lines(at(tmp_path / "a.txt"), start) == Lines([], more=False, total=0)
    (tmp_path / "b.txt").write_text("disk\n")
    disk = await workspace(conn, read=False).read_lines(at(tmp_path / "b.txt"), start)
    assert disk == Lines(["disk"], more=False, total=1)


async def test_an_offset_past_what_the_editor_has_is_refused_without_a_count(tmp_path: Path) -> None:
    conn = FakeConnection({"fs/read_text_file": {"content": ""}})
    call = editor_call(tmp_path, conn)
    result = await ReadFileTool().run(ReadFileParams(path="a.py", offset=9), call)
    assert result.error is not None
    assert (result.error.code, result.error.message) == ("offset_out_of_range", "offset 9 is past the end of a.py")
