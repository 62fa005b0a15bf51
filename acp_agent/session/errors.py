"""Every error the session package raises."""

from __future__ import annotations

from pathlib import Path


class SessionError(Exception):
    """Base of every error raised by `acp_agent.session`."""


class InvariantViolation(SessionError):
    """An event would break a log invariant; `rule` names it."""

    def __init__(self, rule: str, detail: str) -> None:
        self.rule = rule
        self.detail = detail
        super().__init__(f"invariant '{rule}' violated: {detail}")


class UnbalancedSeed(SessionError):
    """A seed replayed cleanly but leaves a turn open."""


class UnknownEventType(SessionError):
    """An event type that no registry entry knows (and the event is not ignorable)."""

    def __init__(self, type: object) -> None:
        self.type = type
        super().__init__(f"unknown session event type {type!r}")


class DuplicateEventType(SessionError):
    """An event type is registered twice in one registry."""


class UnsupportedVersion(SessionError):
    """A session header carries a version this code cannot read."""

    def __init__(self, version: object) -> None:
        self.version = version
        super().__init__(f"unsupported session log version {version!r} (supported: 0)")


class SessionLogDamaged(SessionError):
    """A persisted log is damaged before its last committed turn/end (or in its header)."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"session log {path} is damaged at line {line}: {reason}")


class InvalidSessionId(SessionError):
    """A session id that cannot name a directory safely."""


class SessionNotFound(SessionError):
    """No persisted log exists for a session id."""


class AlreadyAttached(SessionError):
    """A session id is already being persisted by this store."""
