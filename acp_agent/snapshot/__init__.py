"""The snapshot harness: run scenarios against the real server, normalize, compare, record."""

from __future__ import annotations

from acp_agent.snapshot.compare import Digest, compare, digest, read_frames
from acp_agent.snapshot.errors import FixtureMismatch, InvalidScenario, ServerGone, SnapshotError
from acp_agent.snapshot.normalize import Normalized, normalize_run
from acp_agent.snapshot.record import record_scenario
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.runner import run_scenario
from acp_agent.snapshot.scenario import Scenario, load_scenario

__all__ = [
    "Digest",
    "FixtureMismatch",
    "InvalidScenario",
    "Normalized",
    "RunResult",
    "Scenario",
    "ServerGone",
    "SnapshotError",
    "compare",
    "digest",
    "load_scenario",
    "normalize_run",
    "read_frames",
    "record_scenario",
    "run_scenario",
]
