from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from acp_agent.snapshot.syrupy_ext import TranscriptSnapshotExtension

FAKE_SERVER = Path(__file__).with_name("fake_server.py")


@pytest.fixture
def snapshot_file(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """A snapshot stored as a readable text file under snapshots/, mirroring tests/."""
    return snapshot.use_extension(TranscriptSnapshotExtension)


def write_scenario(directory: Path, steps: list[dict[str, Any]], **extra: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "input.json").write_text(json.dumps({"steps": steps, **extra}), encoding="utf-8")
    return directory


def fake_server(at_eof: str = "exit") -> list[str]:
    return [sys.executable, str(FAKE_SERVER), at_eof]
