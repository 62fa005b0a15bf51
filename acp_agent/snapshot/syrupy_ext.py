"""Syrupy extension for scenario snapshots: one text file per test under the repository's
top-level `snapshots/`, mirroring `tests/` (tests/snapshot/test_scenarios.py::test_x[a] ->
snapshots/snapshot/test_scenarios/test_x[a].txt), so modules of the same name in different test
folders never collide. Test-only: it needs the `test` extra (syrupy)."""

from __future__ import annotations

from pathlib import Path

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

TESTS = "tests"
SNAPSHOTS = "snapshots"


class TranscriptSnapshotExtension(SingleFileSnapshotExtension):
    file_extension = "txt"
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        test_file = Path(test_location.filepath).resolve()
        tests = next((parent for parent in test_file.parents if parent.name == TESTS), None)
        if tests is None:
            raise ValueError(f"{test_file} is not under a {TESTS}/ directory: no snapshots/ to mirror it in")
        relative = test_file.parent.relative_to(tests)
        return str(tests.parent / SNAPSHOTS / relative / test_location.basename)
