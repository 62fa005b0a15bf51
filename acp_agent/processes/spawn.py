"""`open_leader`: the one way a package starts a process the registry must be able to end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import anyio
from anyio.abc import Process

from acp_agent.processes.registry import CommandGroup

Redirect = int | IO[bytes] | None
"""A child's stream as `subprocess` takes it: `PIPE`, `DEVNULL`, `STDOUT`, a file, or inherited."""


async def open_leader(
    argv: Sequence[str],
    *,
    cwd: Path | str | None,
    env: Mapping[str, str],
    group: CommandGroup | None,
    stdin: Redirect,
    stdout: Redirect,
    stderr: Redirect,
    pass_fds: Sequence[int] = (),
) -> Process:
    """Start `argv` as the leader of a session (so a process group) of its own; with a `group`,
    carrying its marker and registered as started before anything else runs (a child the
    registry does not know when it looks is taken for an orphan). `OSError` when it cannot start."""
    process = await anyio.open_process(
        list(argv),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=dict(env) if group is None else {**env, **group.env},
        pass_fds=pass_fds,
        start_new_session=True,
    )
    if group is not None:
        group.started(process.pid)
    return process
