"""Subagents: child agents in the same process, fresh (spawn) or seeded with the parent's
completed turns (fork), optionally answering with a structured value."""

from __future__ import annotations

from acp_agent.subagents.driver import InProcessRun, start_in_process_run
from acp_agent.subagents.errors import (
    DepthError,
    DuplicateProvider,
    MissingCapability,
    SubagentError,
    UnknownProvider,
    UnsupportedSchema,
)
from acp_agent.subagents.registry import (
    Capabilities,
    SubagentProvider,
    SubagentRegistry,
    SubagentRequest,
    SubagentResult,
    SubagentRun,
)

__all__ = [
    "Capabilities",
    "DepthError",
    "DuplicateProvider",
    "InProcessRun",
    "MissingCapability",
    "SubagentError",
    "SubagentProvider",
    "SubagentRegistry",
    "SubagentRequest",
    "SubagentResult",
    "SubagentRun",
    "UnknownProvider",
    "UnsupportedSchema",
    "start_in_process_run",
]
