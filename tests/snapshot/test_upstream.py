"""The upstream scenarios (recorded by the TypeScript original, read in place from
../shared/upstream) replayed through this server: the transcript must be equivalent to the
golden one (see acp_agent/snapshot/compare.py for what "equivalent" keeps)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_agent.snapshot.compare import compare, read_frames
from acp_agent.snapshot.result import RunResult
from tests.paths import UPSTREAM

pytestmark = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/upstream is absent")

NAMES = sorted(path.name for path in UPSTREAM.iterdir() if path.is_dir()) if UPSTREAM.is_dir() else []


@pytest.mark.parametrize("name", NAMES)
def test_upstream_scenario(name: str, scenario_run: Callable[[Path], RunResult]) -> None:
    result = scenario_run(UPSTREAM / name)
    assert result.failures == []
    golden = read_frames(UPSTREAM / name / "stdout.golden.jsonl")
    assert compare(golden, [json.loads(line) for line in result.stdout]) == []
