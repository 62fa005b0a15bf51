"""Every error the session package raises."""

from __future__ import annotations

import errno
import os
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


class MisplacedLog(SessionError):
    """A log whose header names another session than its directory does (a session directory
    copied or renamed by hand): it is not opened under a name that is not its own."""

    def __init__(self, path: Path, session_id: str, header_id: str) -> None:
        self.path = path
        self.header_id = header_id
        super().__init__(
            f"the log {path} belongs to session {header_id!r}, not to {session_id!r}: a session directory"
            f" copied or renamed by hand is not opened under another name (rename it back to {header_id!r})"
        )


class LogUnwritable(SessionError):
    """A session's log cannot be written (a full disk, a read-only or failing file system, its
    directory removed by hand); `cause` is the operating system's error."""

    def __init__(self, directory: Path, cause: OSError) -> None:
        self.directory = directory
        self.cause = cause
        name = errno.errorcode.get(cause.errno or 0)
        why = f"{cause.strerror or cause}" + (f" ({name})" if name else "")
        super().__init__(f"cannot write the session log in {directory}: {why}")


class InvalidSessionId(SessionError):
    """A session id that cannot name a directory safely."""


class SessionNotFound(SessionError):
    """No persisted log exists for a session id."""


class AlreadyAttached(SessionError):
    """A session id is already being persisted by this store."""


class SessionBusy(SessionError):
    """Another live process has the session open (it holds the session's lock)."""

    def __init__(self, session_id: str, waited: float) -> None:
        self.session_id = session_id
        super().__init__(
            f"session {session_id!r} is open in another process"
            f" (still after waiting {waited:g} s); close it there first"
        )


class ForeignSessionsDirectory(SessionError):
    """The sessions directory belongs to another user."""

    def __init__(self, directory: Path, owner: int) -> None:
        self.directory = directory
        super().__init__(
            f"sessions directory {directory} belongs to uid {owner}, not to this user (uid {os.getuid()});"
            " refusing to keep session logs there (set ACP_AGENT_SESSIONS to a directory of your own)"
        )


class UnusableSessionsDirectory(SessionError):
    """The sessions directory is no directory this user can keep logs in (a file is in the way, it
    cannot be made, or it is not writable)."""

    def __init__(self, directory: Path, why: str) -> None:
        self.directory = directory
        super().__init__(
            f"sessions directory {directory} cannot hold session logs: {why}"
            " (set ACP_AGENT_SESSIONS to a directory of your own)"
        )


class TurnsOutOfRange(SessionError):
    """A prefix of more turns than the log ended was asked for (`completed_turn_prefix`)."""
