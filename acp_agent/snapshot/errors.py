"""Errors of the snapshot harness. What goes wrong *during* a run is data (`RunResult.failures`),
so that one run reports every problem; these are for inputs the harness cannot use at all."""

from __future__ import annotations

from pathlib import Path


class SnapshotError(Exception):
    """Base class of the snapshot harness's errors."""


class InvalidScenario(SnapshotError):
    """Raised when a scenario's `input.json` (or the model script to record it with) is missing or invalid."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"invalid scenario {path}: {reason}")
        self.path = path
        self.reason = reason


class ServerGone(SnapshotError):
    """Raised inside a run when the server closed its stdout (or stdin) before answering a step."""


__all__ = ["InvalidScenario", "ServerGone", "SnapshotError"]
