"""The bytes of session logs on disk: what is left when writing fails, and racing creators."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from acp_agent.session.files import LogFile, SessionLock, private_dir


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


def test_a_directory_made_meanwhile_by_someone_else_keeps_its_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
