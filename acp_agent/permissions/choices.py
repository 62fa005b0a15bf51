"""A session's choices, folded from its log: the explicit mode and the standing grants.

The log is the only record: the fold is incremental (each session's fold remembers how far it has
read), so asking before every call costs only the events appended since the last ask. A child's fork
seed is its parent's history, not its own choices, and is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from weakref import WeakKeyDictionary

from acp_agent.permissions.events import GRANT_EVENT, MODE_EVENT
from acp_agent.session.log import Session


@dataclass
class Choices:
    mode: str | None = None
    """The last mode chosen in the session (by the user, or inherited); None: the default."""
    grants: dict[str, Literal["allow", "reject"]] = field(default_factory=dict)
    """The last "always" answer per tool."""
    server_grants: dict[str, Literal["allow", "reject"]] = field(default_factory=dict)
    """The last "always" answer for every tool of an MCP server, per server."""
    scope_grants: dict[tuple[str, str], Literal["allow", "reject"]] = field(default_factory=dict)
    """The last "always" answer for the calls of a tool with a scope (a host), per (tool, scope)."""
    read: int = 0
    """The seq up to which the log is folded in."""


_FOLDS: WeakKeyDictionary[Session, Choices] = WeakKeyDictionary()


def choices(session: Session) -> Choices:
    """The session's choices as of its last event."""
    folded = _FOLDS.get(session)
    if folded is None:
        folded = _FOLDS[session] = Choices(read=session.header.seed_length or 0)
    for event in session.events_from(folded.read):
        data: Any = event.data
        if event.type == MODE_EVENT:
            folded.mode = data.mode_id
        elif event.type == GRANT_EVENT and data.server is not None:
            folded.server_grants[data.server] = data.decision
        elif event.type == GRANT_EVENT and data.scope is not None:
            folded.scope_grants[(data.tool, data.scope)] = data.decision
        elif event.type == GRANT_EVENT:
            folded.grants[data.tool] = data.decision
    folded.read = session.next_seq
    return folded
