from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Protocol

import anyio
import pytest
from syrupy.assertion import SnapshotAssertion

from acp_agent.snapshot.runner import RunResult, run_scenario
from acp_agent.snapshot.scenario import load_scenario
from acp_agent.snapshot.syrupy_ext import TranscriptSnapshotExtension

FAKE_SERVER = Path(__file__).with_name("fake_server.py")


@pytest.fixture
def snapshot_file(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """A snapshot stored as a readable text file under snapshots/, mirroring tests/."""
    return snapshot.use_extension(TranscriptSnapshotExtension)


@pytest.fixture(scope="session")
def scenario_run(tmp_path_factory: pytest.TempPathFactory) -> ScenarioRun:
    """Runs a scenario directory through the real server once per test session and mode (several
    tests read the same run), in process so the harness is measured by coverage. `child_sessions`:
    the client advertises `subagents` (True), does not (False), or as input.json says (None)."""
    runs: dict[tuple[Path, bool], RunResult] = {}

    def run(directory: Path, child_sessions: bool | None = None) -> RunResult:
        if child_sessions is None:
            child_sessions = load_scenario(directory).client_capabilities.subagents is not None
        key = (directory, child_sessions)
        if key not in runs:
            workdir = tmp_path_factory.mktemp(directory.name)
            runs[key] = anyio.run(lambda: run_scenario(directory, workdir, child_sessions=child_sessions))
        return runs[key]

    return run


class ScenarioRun(Protocol):
    def __call__(self, directory: Path, child_sessions: bool | None = None) -> RunResult: ...


def write_scenario(directory: Path, steps: list[dict[str, Any]], **extra: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "input.json").write_text(json.dumps({"steps": steps, **extra}), encoding="utf-8")
    return directory


def fake_server(at_eof: str = "exit") -> list[str]:
    return [sys.executable, str(FAKE_SERVER), at_eof]
