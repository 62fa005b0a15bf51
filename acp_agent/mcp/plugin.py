"""Loader plugin providing `ctx.get(MCP)`: the MCP servers a client hands its sessions, as tools.

Row: `{id: mcp, name: acp_agent.mcp.plugin, config: {startupTimeout: 30, callTimeout: 120,
maxOutputBytes: 30000, trustReadOnlyHint: false}}`. It registers the `mcp/status` and `mcp/tools`
event types, the wait for servers before each model call, the sharing of a session's connections
with its children and the closing of every connection at shutdown. A client layer opens a
session's servers (`ctx.get(MCP).open(agent, specs)`) once it has answered the request that named
them; that session then offers `/mcp` when the composition has a command list (the commands row
comes first). The project's own servers (`.mcp.json`) join a session's once the project is
trusted (the trust row comes first).
"""

from __future__ import annotations

from acp_agent.environ.variables import credential_names
from acp_agent.kernel.context import SHUTDOWN, Context
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.mcp.events import StatusEvent, ToolsEvent
from acp_agent.mcp.limits import Limits
from acp_agent.mcp.session import MCP, McpService
from acp_agent.session.persistence import SESSIONS
from acp_agent.subagents.driver import INHERIT
from acp_agent.tools.base import BEFORE_MODEL_CALL
from acp_agent.trust.service import TRUST

name = "mcp"
inject = ("sessions", "tools")

Config = Limits


def apply(ctx: Context, config: Limits) -> Disposer:
    # Credential variables are read when a server starts: adapter rows may come after this one.
    service = McpService(ctx, config, lambda: credential_names(ctx))
    registry = ctx.get(SESSIONS).registry
    trust = ctx.find(TRUST)
    return combine(
        *([trust.add_items(service.trust_items)] if trust is not None else []),
        registry.register(StatusEvent, "free"),
        registry.register(ToolsEvent, "free"),
        ctx.provide(MCP, service),
        ctx.events.on(BEFORE_MODEL_CALL, service.before_model_call),
        ctx.events.on(INHERIT, service.inherit),
        ctx.events.on(SHUTDOWN, service.close_all),
    )
