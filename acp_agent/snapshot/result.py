"""What a scenario run produced (`runner.run_scenario`), and what normalizing reads.

A module of its own so that the modules reading a run (`normalize`, `transcript`) and the one
making it (`runner`, which uses `normalize` for pre-seeded logs) do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RunResult:
    stdout: list[str]
    """Every stdout line, in order, as written."""
    stderr: str
    logs: dict[str, list[Any]]
    """Each persisted session log (header first), keyed by route, in route order."""
    cwd: Path
    """The session cwd: the copy of `workspace/` that the run may have changed."""
    sent: list[str]
    """Every line written to the server's stdin, in order."""
    exit_code: int | None
    failures: list[str]
    config: Path | None = None
    """The user configuration directory the server was given (`ACP_AGENT_CONFIG`)."""
    scenario: Path | None = None
    """The scenario directory (the client's lines may name files in it)."""
    sent_after: list[tuple[int, ...]] = field(default_factory=list)
    """For each line of `sent`, the indices of the stdout lines its step waited for before writing
    it (the request it answers, the response or chunk it waited for; none: the first line)."""
