"""Errors of the permissions package."""

from __future__ import annotations


class PermissionsError(Exception):
    """Base of the permissions package's errors."""


class UnknownMode(PermissionsError, ValueError):
    """A session mode id that is not one of the modes offered."""

    def __init__(self, mode_id: str, known: list[str]) -> None:
        super().__init__(f"unknown session mode {mode_id!r}; the modes are {', '.join(map(repr, known))}")
        self.mode_id = mode_id
        self.known = known


class AskFailed(PermissionsError):
    """The user could not be asked (the client answered an error, or went away)."""
