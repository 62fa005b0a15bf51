"""Confinement under attack: symbolic links swapped in while the file tools run, hard links to
files outside, modes and owners of replaced files."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from acp_agent.tools import (
    EditFileParams,
    EditFileTool,
    ReadFileParams,
    ReadFileTool,
    WriteFileParams,
    WriteFileTool,
    confined,
)
from acp_agent.tools.confined import kind, resolve_in

from .helpers import logged, logged_call

pytestmark = pytest.mark.anyio

SECRET = "secret: outside the cwd\n"
CALLS = 150
"""Calls of each tool while the swapper runs (each one races it several times)."""


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "file.txt").write_text(SECRET)
    return tmp_path / "outside"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    (tmp_path / "work" / "sub").mkdir(parents=True)
    (tmp_path / "work" / "sub" / "file.txt").write_text("inside\n")
    (tmp_path / "work" / "file.txt").write_text("inside\n")
    return tmp_path / "work"


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_ino) for p in directory.iterdir()}


@contextmanager
def swapping(cwd: Path, outside: Path) -> Iterator[list[int]]:
    """A thread that keeps swapping `sub` (a directory, then a link to `outside`) and `file.txt`
    (a file, then a link to the file outside) until the block ends; yields its swap count."""
    done = threading.Event()
    swaps = [0]
    failures: list[BaseException] = []

    def into_gap(put: Callable[[], None]) -> None:
        """`put()` where `sub` was just removed; a write may have made a directory there
        meanwhile (it creates missing parents): remove it and try again."""
        while True:
            try:
                return put()
            except OSError:
                shutil.rmtree(cwd / "sub", ignore_errors=True)

    def swap() -> None:
        try:
            while not done.is_set():
                os.rename(cwd / "sub", cwd / "sub.real")
                into_gap(lambda: os.symlink(outside, cwd / "sub"))
                os.symlink(outside / "file.txt", cwd / "link.tmp")
                os.replace(cwd / "link.tmp", cwd / "file.txt")
                os.unlink(cwd / "sub")
                into_gap(lambda: os.rename(cwd / "sub.real", cwd / "sub"))
                (cwd / "file.tmp").write_text("inside\n")
                os.replace(cwd / "file.tmp", cwd / "file.txt")
                swaps[0] += 1
        except BaseException as exc:  # reported by the test, not lost in the thread
            failures.append(exc)

    thread = threading.Thread(target=swap)
    thread.start()
    try:
        yield swaps
    finally:
        done.set()
        thread.join()
    assert failures == []


async def test_a_racing_symlink_swapper_never_redirects_a_read_a_write_or_an_edit(cwd: Path, outside: Path) -> None:
    before = snapshot(outside)
    seen: set[str] = set()
    with swapping(cwd, outside) as swaps:
        for n in range(CALLS):
            for path in ("file.txt", "sub/file.txt"):
                result = await ReadFileTool().run(ReadFileParams(path=path), logged_call(cwd))
                seen.add(result.error.code if result.error else "read")
                assert "secret" not in result.plain_text()
                result = await WriteFileTool().run(WriteFileParams(path=path, content=f"write {n}\n"), logged_call(cwd))
                seen.add(result.error.code if result.error else "written")
                edit = EditFileParams(path=path, old_text="\n", new_text=" edited\n")
                result = await EditFileTool().run(edit, logged_call(cwd))
                seen.add(result.error.code if result.error else "edited")
                assert "secret" not in result.plain_text()
    assert snapshot(outside) == before  # nothing written, replaced or created outside
    assert swaps[0] > 0
    assert {"read", "written", "edited"} <= seen  # the tools also got through between swaps


async def test_a_hard_link_to_a_file_outside_is_read_but_never_written_through(cwd: Path, outside: Path) -> None:
    os.link(outside / "file.txt", cwd / "linked.txt")
    result = await ReadFileTool().run(ReadFileParams(path="linked.txt"), logged_call(cwd))
    assert result.plain_text() == f"     1\t{SECRET.rstrip()}"  # allowed: a hard link is the same file
    result = await EditFileTool().run(
        EditFileParams(path="linked.txt", old_text="outside", new_text="edited"), logged_call(cwd)
    )
    assert not result.is_error
    result = await WriteFileTool().run(WriteFileParams(path="linked.txt", content="written\n"), logged_call(cwd))
    assert not result.is_error
    assert (outside / "file.txt").read_text() == SECRET  # the other name keeps the old file
    assert (cwd / "linked.txt").read_text() == "written\n"
    assert (cwd / "linked.txt").stat().st_nlink == 1


async def test_a_replaced_file_keeps_its_mode_and_leaves_no_temporary_file(cwd: Path) -> None:
    script = cwd / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o751)
    inode = script.stat().st_ino
    result = await EditFileTool().run(EditFileParams(path="run.sh", old_text="one", new_text="two"), logged_call(cwd))
    assert not result.is_error
    assert script.read_text() == "echo two\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.stat().st_ino != inode  # a new file, renamed over the old one
    assert sorted(p.name for p in cwd.iterdir()) == ["file.txt", "run.sh", "sub"]


async def test_a_new_file_gets_the_mode_the_umask_gives(cwd: Path) -> None:
    umask = os.umask(0o027)
    try:
        result = await WriteFileTool().run(WriteFileParams(path="new/made.txt", content="x"), logged_call(cwd))
    finally:
        os.umask(umask)
    assert not result.is_error
    assert stat.S_IMODE((cwd / "new" / "made.txt").stat().st_mode) == 0o640
    assert stat.S_IMODE((cwd / "new").stat().st_mode) == 0o750


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
async def test_a_file_of_another_user_is_not_replaced(cwd: Path) -> None:
    theirs = cwd / "theirs.txt"
    theirs.write_text("theirs\n")
    os.chown(theirs, 4321, 4321)
    result = await WriteFileTool().run(WriteFileParams(path="theirs.txt", content="mine\n"), logged_call(cwd))
    assert result.error is not None
    assert (result.error.code, result.error.message) == (
        "not_owned",
        "theirs.txt belongs to another user: it is not replaced",
    )
    assert theirs.read_text() == "theirs\n" and theirs.stat().st_uid == 4321


def test_a_link_put_in_the_path_after_the_check_fails_the_operation(cwd: Path, outside: Path) -> None:
    target = resolve_in(cwd, "sub/file.txt")
    os.rename(cwd / "sub", cwd / "sub.real")
    os.symlink(outside, cwd / "sub")
    for operation in (lambda: confined.read_bytes(target), lambda: confined.replace(target, b"x")):
        with pytest.raises(OSError) as caught:
            operation()
        assert caught.value.strerror == "a symbolic link appeared in its path after it was checked"
    last = resolve_in(cwd, "file.txt")
    os.replace(cwd / "sub", cwd / "file.txt")  # now the last name is the link
    with pytest.raises(OSError, match="a symbolic link appeared"):
        confined.read_bytes(last)
    with pytest.raises(OSError, match="a symbolic link appeared"):
        confined.replace(last, b"x")
    assert kind(last) == "other" and kind(resolve_in(cwd, "sub.real")) == "directory"
    assert kind(resolve_in(cwd, "nothing/here")) is None
    assert (outside / "file.txt").read_text() == SECRET


def test_paths_through_links_inside_and_back_out(cwd: Path, tmp_path: Path) -> None:
    (cwd / "up").symlink_to("sub/..")  # a relative link that stays inside
    assert resolve_in(cwd, "up/sub/file.txt").shown == "sub/file.txt"
    (cwd / "sub" / "back").symlink_to("../..")  # leads out
    with pytest.raises(Exception, match="through a symbolic link"):
        resolve_in(cwd, "sub/back/outside")
    assert resolve_in(cwd, str(tmp_path / "outside" / ".." / "work" / "file.txt")).shown == "file.txt"
    assert resolve_in(cwd, "file.txt/..").shown == "."  # below a file: taken as written


async def test_a_cancel_during_a_write_still_logs_the_diff_of_what_was_written(
    cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, release = threading.Event(), threading.Event()
    replace = confined.replace

    def slow_replace(target: confined.Target, data: bytes) -> None:
        started.set()
        release.wait(10)
        replace(target, data)

    monkeypatch.setattr(confined, "replace", slow_replace)
    call = logged_call(cwd)
    results = []

    async def write() -> None:
        results.append(await WriteFileTool().run(WriteFileParams(path="file.txt", content="new\n"), call))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(write)
        await anyio.to_thread.run_sync(started.wait)
        tasks.cancel_scope.cancel()  # while the write's thread runs
        release.set()
    assert (cwd / "file.txt").read_text() == "new\n"
    [shown] = logged(call, "tool/display")
    assert shown.diffs is not None and shown.diffs[0].new_text == "new\n"  # the change and its diff, together
    assert [r.plain_text() for r in results] == ["Overwrote file.txt (1 line)."]


async def test_only_regular_files_are_read_and_the_cwd_itself_is_a_directory(cwd: Path) -> None:
    os.mkfifo(cwd / "pipe")
    result = await ReadFileTool().run(ReadFileParams(path="pipe"), logged_call(cwd))  # never blocks
    assert result.error is not None
    assert (result.error.code, result.error.message) == ("io_error", "cannot access pipe: not a regular file")
    result = await WriteFileTool().run(WriteFileParams(path=".", content="x"), logged_call(cwd))
    assert result.error is not None and result.error.code == "is_a_directory"


def test_an_absolute_link_inside_a_subdirectory_restarts_from_the_cwd(cwd: Path) -> None:
    (cwd / "sub" / "deeper").mkdir()
    (cwd / "sub" / "deeper" / "top").symlink_to(cwd / "file.txt")
    assert resolve_in(cwd, "sub/deeper/top").parts == ("file.txt",)


def test_a_failed_replace_leaves_the_old_file_and_no_temporary_file(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(confined.os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        confined.replace(resolve_in(cwd, "file.txt"), b"new\n")
    assert (cwd / "file.txt").read_text() == "inside\n"
    assert sorted(p.name for p in cwd.iterdir()) == ["file.txt", "sub"]
