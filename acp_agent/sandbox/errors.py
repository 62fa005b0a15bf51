"""Errors of the sandbox package."""

from __future__ import annotations


class SandboxUnavailable(RuntimeError):
    """No backend can confine a command here: the command must not run. The message says why."""
