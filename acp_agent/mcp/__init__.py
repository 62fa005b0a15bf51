"""MCP servers from the editor (stdio, streamable HTTP, SSE) as tools of every agent of a session.

Importing this package does not import the MCP SDK: only a session with servers loads it
(`connection.py`), in a worker thread, once its request is answered.
"""

from __future__ import annotations

from acp_agent.mcp.events import STATUS_EVENT, TOOLS_EVENT, StatusData, StatusEvent, ToolInfo, ToolsData, ToolsEvent
from acp_agent.mcp.limits import Limits
from acp_agent.mcp.names import assign, tool_name
from acp_agent.mcp.servers import HttpServer, NameValue, ServerSpec, StdioServer, UnsupportedServer, parse_servers
from acp_agent.mcp.session import McpService, McpSession, ServerStatus, logged_tools
from acp_agent.mcp.tool import McpArguments, McpTool

__all__ = [
    "STATUS_EVENT",
    "TOOLS_EVENT",
    "HttpServer",
    "Limits",
    "McpArguments",
    "McpService",
    "McpSession",
    "McpTool",
    "NameValue",
    "ServerSpec",
    "ServerStatus",
    "StatusData",
    "StatusEvent",
    "StdioServer",
    "ToolInfo",
    "ToolsData",
    "ToolsEvent",
    "UnsupportedServer",
    "assign",
    "logged_tools",
    "parse_servers",
    "tool_name",
]
