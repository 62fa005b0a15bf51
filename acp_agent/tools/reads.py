"""Read before write: which files an agent has read (or written) in its session, as they were then.

`edit_file`, and `write_file` over an existing file, refuse a file the agent has not read in this
session, or one that changed on disk since (its size or modification time differ): the model would
otherwise change text it never saw, or overwrite someone else's change. A file the agent created or
wrote counts as read, as it is after the write. Kept per agent, in memory, while its scope lives
(a reopened session reads again before it writes).
"""

from __future__ import annotations

from pathlib import Path

from acp_agent.kernel.tables import take
from acp_agent.tools import confined, texts
from acp_agent.tools.base import CallingAgent, ToolCallContext, ToolResult
from acp_agent.tools.confined import Stamp, Target

_SEEN: dict[CallingAgent, dict[Path, Stamp]] = {}
"""By the file's absolute path: files of two roots (the cwd, a scratch directory) may share the
parts below them."""


def remember(call: ToolCallContext, target: Target) -> None:
    """The agent has the file's current text (it read or wrote it)."""
    stamp = confined.stamp(target)
    if stamp is None:
        return
    seen = _SEEN.get(call.agent)
    if seen is None:
        agent = call.agent
        seen = _SEEN[agent] = {}
        agent.scope.add(lambda: _forget(agent))
    seen[target.path] = stamp


def refusal(call: ToolCallContext, target: Target) -> ToolResult | None:
    """Why the agent may not change the file now (None: it may): an existing file it has not read,
    or one that changed since it read it."""
    stamp = confined.stamp(target)
    if stamp is None:
        return None  # a new file
    read = _SEEN.get(call.agent, {}).get(target.path)
    if read is None:
        return ToolResult.failure(texts.not_read(target.shown), "not_read")
    if read != stamp:
        return ToolResult.failure(texts.changed_since_read(target.shown), "changed_since_read")
    return None


def _forget(agent: CallingAgent) -> None:
    take(_SEEN, agent)
