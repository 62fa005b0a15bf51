"""A session's private temporary directory: made at its first use (mode 0700), exported to its
commands as `TMPDIR`, removed when the session closes (its agent's scope is disposed) or, for one
still open then, when the server exits."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from weakref import WeakKeyDictionary

from acp_agent.session.log import Session
from acp_agent.tools.base import ToolCallContext

SCRATCH_PREFIX = "acp-agent-tmp-"
"""How the name of each private temporary directory begins (in the system's temporary directory)."""
_DIRS: WeakKeyDictionary[Session, Path] = WeakKeyDictionary()
_LIVE: set[Path] = set()
"""The directories of sessions still open, removed at the server's exit."""


def scratch_dir(call: ToolCallContext) -> Path:
    """The private temporary directory of `call`'s session (made now if it has none yet)."""
    found = _DIRS.get(call.session)
    if found is None:
        found = _DIRS[call.session] = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))  # 0700
        _LIVE.add(found)
        call.scope.add(_Remove(found))
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
