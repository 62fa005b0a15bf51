"""Errors of model streams: provider failures (`LlmError` with a code) and replay misuse."""

from __future__ import annotations

from collections.abc import Mapping


class LlmError(Exception):
    """A model call failed; `code` classifies it (AUTH, RATE_LIMIT, SERVER, TIMEOUT, ...)."""

    def __init__(self, message: str, code: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


class ReplayError(LlmError):
    """The replay model cannot serve a call as the fixtures describe it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "REPLAY")


class FixtureNotFound(ReplayError):
    """Raised when the scenario directory or its primary `session.jsonl` does not exist."""


class InvalidScript(ReplayError):
    """Raised when a recorded (turn, step) group of chunks does not end with a `finish` chunk."""

    def __init__(self, session: str, turn: int, step: int) -> None:
        super().__init__(
            f"invalid replay script: session {session} turn {turn} step {step} has chunks but no"
            " finish chunk (a thrown request must be written as a replay.override.json entry)"
        )


class UnknownRoute(ReplayError):
    """Raised when an agent asks for a model call and no script is keyed by its route."""

    def __init__(self, route: str, known: list[str]) -> None:
        super().__init__(f"no replay script for route {route!r}; known routes: {', '.join(known) or 'none'}")
        self.route = route


class ScriptExhausted(ReplayError):
    """Raised when an agent makes more model calls than its script recorded."""

    def __init__(self, route: str, index: int, length: int) -> None:
        super().__init__(f"replay script for route {route!r} is exhausted: call {index + 1} asked, {length} recorded")
        self.route = route


class FixturesNotConsumed(ReplayError):
    """Reported at shutdown when recorded calls were never asked for (consumed/total per route)."""

    def __init__(self, progress: Mapping[str, tuple[int, int]]) -> None:
        detail = ", ".join(f"{route} {used}/{total}" for route, (used, total) in progress.items())
        super().__init__(f"replay fixtures not fully consumed: {detail}")
        self.progress = dict(progress)
