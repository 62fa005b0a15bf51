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


class FixtureMismatch(SnapshotError):
    """Reported (as a run failure) when a route's agent was prompted otherwise than the fixture
    the replay model served it: the fixtures' routes are mixed up."""

    def __init__(self, route: str, fixture: str, recorded: list[str], asked: list[str]) -> None:
        super().__init__(
            f"route {route!r} replayed {fixture}, recorded for the prompts {recorded!r}, but the run's"
            f" agent on that route was prompted {asked!r}"
        )
        self.route = route
        self.fixture = fixture
        self.recorded = recorded
        self.asked = asked


class ServerGone(SnapshotError):
    """Raised inside a run when the server closed its stdout (or stdin) before answering a step."""


__all__ = ["FixtureMismatch", "InvalidScenario", "ServerGone", "SnapshotError"]
