from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from syrupy.assertion import SnapshotAssertion

from acp_agent.snapshot.syrupy_ext import TranscriptSnapshotExtension
from tests.paths import ROOT


def location(filepath: Path) -> object:
    return SimpleNamespace(filepath=str(filepath), basename=filepath.stem)


def test_snapshots_mirror_the_tests_folder() -> None:
    where = TranscriptSnapshotExtension.dirname(test_location=location(ROOT / "tests" / "e2e" / "test_x.py"))  # type: ignore[arg-type]
    assert where == str(ROOT / "snapshots" / "e2e" / "test_x")


def test_a_test_file_outside_tests_has_no_snapshot_place(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not under a tests/ directory"):
        TranscriptSnapshotExtension.dirname(test_location=location(tmp_path / "test_x.py"))  # type: ignore[arg-type]


def test_the_fixture_writes_text_files_here(snapshot_file: SnapshotAssertion) -> None:
    assert "one line\nanother line\n" == snapshot_file
