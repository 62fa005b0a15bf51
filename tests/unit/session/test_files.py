"""The bytes of session logs on disk: what is left when writing fails, and racing creators."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_agent.session.files import LogFile, SessionLock, private_dir
from tests.mounts import tmpfs


def test_a_log_that_cannot_take_its_place_leaves_no_staging_file(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    (path / "in-the-way").mkdir(parents=True)  # a non-empty directory: the rename fails
    with pytest.raises(OSError):
        LogFile.create(path, [b"{}\n"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_a_log_larger_than_one_write_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    lines = [b'{"n": %d, "pad": "%s"}\n' % (n, b"x" * 1000) for n in range(2500)]  # about 2.5 MB
    LogFile.create(path, lines).close()
    assert path.read_bytes() == b"".join(lines)


def test_reopening_past_a_bad_end_fails_and_leaves_the_file(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"{}\n")
    with pytest.raises(OSError):
        LogFile.reopen(path, -1)
    assert path.read_bytes() == b"{}\n"


def test_a_lock_lets_go_once(tmp_path: Path) -> None:
    lock = SessionLock.try_acquire(tmp_path)
    assert lock is not None and SessionLock.try_acquire(tmp_path) is None
    lock.release()
    lock.release()
    again = SessionLock.try_acquire(tmp_path)
    assert again is not None
    again.release()


def test_a_directory_made_meanwhile_by_someone_else_keeps_its_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir
    target = tmp_path / "a" / "b"

    def racing_mkdir(path: os.PathLike[str] | str, mode: int = 0o777) -> None:
        if Path(path) == target:
            real_mkdir(path, 0o755)  # the other creator wins the race
            os.chmod(path, 0o755)
        real_mkdir(path, mode)

    monkeypatch.setattr(os, "mkdir", racing_mkdir)
    private_dir(target)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_held_lines_reach_the_file_with_the_next_append_or_flush_and_before_a_stamp_or_close(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    log = LogFile.create(path, [b"h\n"])
    assert log.hold(b"c1\n") and not log.hold(b"c2\n")  # True: it began holding
    assert path.read_bytes() == b"h\n"
    log.append(b"e\n")  # what was held first, in the same write
    assert path.read_bytes() == b"h\nc1\nc2\ne\n"
    log.hold(b"c3\n")
    log.flush()
    log.flush()  # nothing held: nothing written
    assert path.read_bytes() == b"h\nc1\nc2\ne\nc3\n"
    log.hold(b"c4\n")
    assert log.stamp()[0] == len(b"h\nc1\nc2\ne\nc3\nc4\n")  # the size of every line
    log.hold(b"c5\n")
    log.close()
    assert path.read_bytes().endswith(b"c4\nc5\n")


def test_a_log_whose_file_was_deleted_is_not_written_into(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    log = LogFile.create(path, [b"{}\n"])
    path.unlink()
    with pytest.raises(FileNotFoundError, match="the log file was deleted") as caught:
        log.append(b"{}\n")
    assert caught.value.errno == errno.ENOENT and log.failure is caught.value
    log.close()


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", "64k") as disk:
        yield disk


def fill(path: Path) -> None:
    with path.open("ab", buffering=0) as file, contextlib.suppress(OSError):
        while True:
            file.write(b"\0" * 4096)


@pytest.mark.parametrize("make", ["create", "reopen"])
def test_a_line_a_full_disk_took_in_part_is_cut_off_and_the_log_goes_on_once_there_is_room(
    full_disk: Path, make: str
) -> None:
    path = full_disk / "session.jsonl"
    if make == "create":  # mkstemp's descriptor writes where it stands, not at the end
        log = LogFile.create(path, [b"header\n"])
    else:
        path.write_bytes(b"header\n")
        log = LogFile.reopen(path, len(b"header"))
    log.hold(b"held\n")
    fill(full_disk / "filler")
    with pytest.raises(OSError) as caught:
        log.append(b"x" * 20_000 + b"\n")  # more than the page's room: written in part, then ENOSPC
    assert caught.value.errno == errno.ENOSPC
    assert path.read_bytes() == b"header\n"
    (full_disk / "filler").unlink()
    log.append(b"next\n")
    log.close()
    assert path.read_bytes() == b"header\nheld\nnext\n"  # what was held, not the refused line, no hole


def test_a_cut_that_fails_is_made_before_the_next_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "session.jsonl"
    log = LogFile.create(path, [b"header\n"])
    writes = iter([3, OSError(errno.EIO, "Input/output error")])
    real_write, real_truncate = os.write, os.ftruncate

    def failing_write(fd: int, data: bytes) -> int:
        step = next(writes, None)
        if step is None:
            return real_write(fd, data)
        if isinstance(step, OSError):
            raise step
        return real_write(fd, bytes(data[:step]))

    def failing_truncate(fd: int, size: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "write", failing_write)
    monkeypatch.setattr(os, "ftruncate", failing_truncate)
    with pytest.raises(OSError):
        log.append(b"line\n")
    assert path.read_bytes() == b"header\nlin"  # the cut failed too
    monkeypatch.setattr(os, "ftruncate", real_truncate)
    log.append(b"next\n")
    log.close()
    assert path.read_bytes() == b"header\nnext\n"
