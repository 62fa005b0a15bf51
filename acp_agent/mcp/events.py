"""The session events of MCP: each server's state changes, and the MCP tools a model call saw.

Both are written `ignorable` (a log holding them loads in any composition, MCP or not) and
registered "free" (a server may connect, fail or re-list its tools at any moment).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

STATUS_EVENT: Final = "mcp/status"
TOOLS_EVENT: Final = "mcp/tools"

State = Literal["connecting", "ready", "failed", "disconnected", "closed"]


class StatusData(Model):
    """`mcp/status`: a server of the session is `ready` (with its tools' original names),
    `failed` to start (or to reconnect), `disconnected` (it went away mid-session)."""

    server: str
    transport: Literal["stdio", "http", "sse"]
    state: State
    tools: list[str] | None = None
    error: str | None = None


class StatusEvent(SessionEvent):
    type: Literal["mcp/status"] = STATUS_EVENT
    data: StatusData


class ToolInfo(Model):
    """An MCP tool as the model saw it (name, description, schema) and as the editor shows it."""

    name: str
    """The agent tool name (`mcp__<server>__<tool>`)."""
    server: str
    tool: str
    """The server's name for it."""
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    open_world: bool = False


class ToolsData(Model):
    """`mcp/tools`: the MCP tools of every model call from here on (logged when the set changes,
    before the first call that sees the new set)."""

    tools: list[ToolInfo]


class ToolsEvent(SessionEvent):
    type: Literal["mcp/tools"] = TOOLS_EVENT
    data: ToolsData
