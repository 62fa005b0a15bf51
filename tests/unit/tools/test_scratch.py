"""The session's private temporary directory: made once on first use, private, removed with the
session."""

from __future__ import annotations

import stat
from pathlib import Path

from acp_agent.tools.scratch import PREFIX, scratch_dir

from .helpers import logged_call


def test_made_on_first_use_private_and_the_same_for_the_session(tmp_path: Path) -> None:
    call = logged_call(tmp_path)
    directory = scratch_dir(call)
    assert directory.name.startswith(PREFIX) and directory.is_dir()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert scratch_dir(call) == directory
    assert scratch_dir(logged_call(tmp_path)) != directory  # another session's
    (directory / "sub").mkdir()
    (directory / "sub" / "out.txt").write_text("kept until the session closes\n")
    call.scope.dispose()
    assert not directory.exists()


def test_a_directory_removed_meanwhile_is_no_error_and_a_new_session_gets_a_new_one(tmp_path: Path) -> None:
    call = logged_call(tmp_path)
    directory = scratch_dir(call)
    directory.rmdir()
    call.scope.dispose()
    assert not directory.exists()
