"""Each session's private temporary directory: where a tool keeps what does not fit in its answer.

`scratch_dir(call)` makes the calling agent's directory on first use (`mkdtemp`: mode 0700, a name
no other process can predict or take first) in the system's temporary directory, and removes it,
with everything in it, when the agent's scope is disposed: its session closes, or the server
exits (the context's scope is disposed last and takes every agent's with it). A server killed
with -9 leaves its directories behind (`acp-agent-*` in the temporary directory).

The reading tools (`read_file`, `glob`, `grep`) reach the calling session's directory besides the
cwd (`resolve_readable`): an overflow file is named to the model by its absolute path.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Final, NamedTuple

from acp_agent.kernel.tables import take
from acp_agent.tools.base import CallingAgent, ToolCallContext
from acp_agent.tools.confined import Target, resolve_in
from acp_agent.tools.errors import OutsideWorkspace, ScratchGone

PREFIX: Final = "acp-agent-"

_DIRECTORIES: dict[CallingAgent, Path] = {}
"""Each agent's directory, while its scope lives."""


def scratch_dir(call: ToolCallContext) -> Path:
    """The calling agent's private temporary directory, made on first use (mode 0700) and removed
    when its session closes or the server exits."""
    return agent_scratch(call.agent)


def agent_scratch(agent: CallingAgent) -> Path:
    """`scratch_dir` of an agent (what `/sandbox` shows, with no call at hand)."""
    directory = _DIRECTORIES.get(agent)
    if directory is None:
        directory = _DIRECTORIES[agent] = Path(tempfile.mkdtemp(prefix=PREFIX))

        def remove() -> None:
            made = take(_DIRECTORIES, agent)
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)  # gone already, or emptied by hand: nothing to keep

        agent.scope.add(remove)
    return directory


class Readable(NamedTuple):
    """A path a reading tool may read: inside the cwd, or inside the session's scratch directory."""

    target: Target
    in_scratch: bool
    """On the disk, whatever the call's workspace (the editor does not hold these files)."""


def resolve_readable(call: ToolCallContext, path: str) -> Readable:
    """`resolve_in` the cwd, or, for an absolute path inside it, the calling session's scratch
    directory (symbolic links confined to it the same way). `ScratchGone` for a path of a scratch
    directory that is no longer there (its session closed); otherwise `OutsideWorkspace`."""
    try:
        return Readable(resolve_in(call.cwd, path), False)
    except OutsideWorkspace:
        wanted = PurePosixPath(path)
        scratch = _DIRECTORIES.get(call.agent)
        if scratch is not None and wanted.is_relative_to(scratch):
            return Readable(resolve_in(scratch, path), True)
        if _of_a_closed_session(wanted):
            raise ScratchGone(path) from None
        raise


def _of_a_closed_session(path: PurePosixPath) -> bool:
    """Whether `path` is in a scratch directory that is not there (any more)."""
    temp = PurePosixPath(tempfile.gettempdir())
    below = path.relative_to(temp).parts if path.is_relative_to(temp) else ()
    return bool(below) and below[0].startswith(PREFIX) and not os.path.lexists(temp / below[0])
