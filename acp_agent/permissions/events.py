"""The session events of the permissions package: mode switches and the user's "always" answers.

Both are registered with invariant class "free" by the plugin: a mode may be switched between turns
or while one runs, and an "always" answer given for a child's call is logged in the top-level
session, whose turn is open then but whose step may not be its own.
"""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

MODE_EVENT: Final = "session/mode"
GRANT_EVENT: Final = "permission/grant"

USER: Final = "user"
INHERITED: Final = "inherited"


class ModeSource(Model):
    """Who chose a mode: `user` (the client's `session/set_mode`), or `inherited` from the parent
    agent's session (`session`) when a child was created."""

    kind: str
    session: str | None = None


class ModeData(Model):
    mode_id: str
    source: ModeSource


class ModeEvent(SessionEvent):
    """`session/mode`: the session's mode from here on."""

    type: Literal["session/mode"] = MODE_EVENT
    data: ModeData


class GrantData(Model):
    tool: str
    decision: Literal["allow", "reject"]
    """`allow`: the user chose "allow always" for the tool; `reject`: "reject always"."""
    route: str | None = None
    """The agent whose call was asked about, when it is not the session's own (a child)."""
    call_id: str | None = None
    """The call the answer was given for."""
    server: str | None = None
    """Set when the answer holds for every tool of this MCP server (`tool` is the one asked about)."""
    scope: str | None = None
    """Set when the answer holds for the calls of `tool` with this scope only (`Tool.grant_scope`:
    web_fetch's host)."""


class GrantEvent(SessionEvent):
    """`permission/grant`: the user's standing answer for a tool, for the rest of the session."""

    type: Literal["permission/grant"] = GRANT_EVENT
    data: GrantData
