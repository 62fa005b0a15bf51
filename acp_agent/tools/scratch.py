"""A session's private temporary directory: made at its first use (mode 0700), exported to its
commands as `TMPDIR`, removed when the session closes (its agent's scope is disposed) or, for one
still open then, when the server exits."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from acp_agent.session.log import Session
from acp_agent.tools.base import ToolCallContext

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

SCRATCH_PREFIX = "acp-agent-tmp-"
"""How the name of each private temporary directory begins (in the system's temporary directory)."""
_DIRS: WeakKeyDictionary[Session, Path] = WeakKeyDictionary()
_LIVE: set[Path] = set()
"""The directories of sessions still open, removed at the server's exit."""


def scratch_dir(call: ToolCallContext) -> Path:
    """The private temporary directory of `call`'s session (made now if it has none yet)."""
    return agent_scratch(call.agent)


def agent_scratch(agent: Agent) -> Path:
    """The private temporary directory of `agent`'s session (made now if it has none yet; removed
    with the agent's scope)."""
    found = _DIRS.get(agent.session)
    if found is None:
        found = _DIRS[agent.session] = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))  # 0700
        _LIVE.add(found)
        agent.scope.add(_Remove(found))
    return found


class _Remove:
    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> None:
        _LIVE.discard(self.path)
        shutil.rmtree(self.path, ignore_errors=True)


@atexit.register
def _remove_all() -> None:
    for path in list(_LIVE):
        _Remove(path)()
