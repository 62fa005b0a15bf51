"""Errors of delegation; their messages are what the parent model reads after `Error: `."""

from __future__ import annotations


class SubagentError(Exception):
    """A child could not be started; nothing of it is left running."""


class DuplicateProvider(SubagentError):
    """Raised when a second provider registers under a name that is taken."""


class UnknownProvider(SubagentError):
    """Raised when a request names a provider nobody registered."""


class MissingCapability(SubagentError):
    """Raised before anything starts when a request needs what its provider cannot do."""

    def __init__(self, provider: str, capability: str) -> None:
        super().__init__(f"subagent provider {provider!r} does not support {capability}")
        self.provider = provider
        self.capability = capability


class DepthError(SubagentError):
    """Raised when the child would be too deep, or the parent's recorded depth is unusable."""


class UnsupportedSchema(SubagentError):
    """Raised when a structured-output schema uses a construct outside the supported subset."""
