"""Each session's private temporary directory: where a tool keeps what does not fit in its answer.

`scratch_dir(call)` makes the calling agent's directory on first use (`mkdtemp`: mode 0700, a name
no other process can predict or take first) in the system's temporary directory, and removes it,
with everything in it, when the agent's scope is disposed: its session closes, or the server
exits (the context's scope is disposed last and takes every agent's with it). A server killed
with -9 leaves its directories behind (`acp-agent-*` in the temporary directory).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

from acp_agent.kernel.tables import take
from acp_agent.tools.base import ToolCallContext

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

PREFIX: Final = "acp-agent-"

_DIRECTORIES: dict[Agent, Path] = {}
"""Each agent's directory, while its scope lives."""


def scratch_dir(call: ToolCallContext) -> Path:
    """The calling agent's private temporary directory, made on first use (mode 0700) and removed
    when its session closes or the server exits."""
    agent = call.agent
    directory = _DIRECTORIES.get(agent)
    if directory is None:
        directory = _DIRECTORIES[agent] = Path(tempfile.mkdtemp(prefix=PREFIX))

        def remove() -> None:
            made = take(_DIRECTORIES, agent)
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)  # gone already, or emptied by hand: nothing to keep

        agent.scope.add(remove)
    return directory
