"""`ctx.get(MCP)`: the MCP servers of each top-level session, their tools in the session's agents.

A top-level session with servers gets an `McpSession` once its `session/new` / `load` / `resume`
answer is out (`McpService.open`): it imports the SDK in a worker thread, then connects every
server at once, each in a task of its own. The tools of the servers that are up are registered in
the session agent's scope, and in the scope of every child agent of the session (children use
the session's connections, with their own tool filter); names are assigned across all servers in
`mcpServers` order. Each state change is logged as `mcp/status`; the MCP tools each model call
sees are logged as `mcp/tools` when they change (`before_model_call`, which first waits for
servers still connecting, up to `startupTimeout`). With a command list in the composition, the
session offers `/mcp` (its servers' state, no model call); a session without servers does not.
Closing the session (or its agent's disposal) closes every connection; `close` waits until the
servers are gone.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from weakref import WeakKeyDictionary

import anyio

from acp_agent.agent.calling import as_agent
from acp_agent.agent.keys import AGENTS
from acp_agent.commands.builtins import reply
from acp_agent.commands.registry import COMMANDS, Command, Invocation
from acp_agent.kernel.context import ServiceKey
from acp_agent.kernel.scope import Disposer, Scope
from acp_agent.kernel.tables import take
from acp_agent.mcp import texts
from acp_agent.mcp.events import (
    State,
    StatusData,
    StatusEvent,
    ToolInfo,
    ToolsData,
    ToolsEvent,
)
from acp_agent.mcp.limits import Limits
from acp_agent.mcp.names import assign
from acp_agent.mcp.project import FILE_NAME, described, project_servers
from acp_agent.mcp.servers import ServerSpec
from acp_agent.mcp.tool import McpTool
from acp_agent.processes.registry import PROCESSES, ProcessRegistry
from acp_agent.session.events import COMMAND_SOURCE, SessionEvent, TurnEndReason
from acp_agent.tools.base import CallingAgent
from acp_agent.tools.registry import TOOLS
from acp_agent.trust.service import TRUST, TrustItem

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket
    from acp_agent.kernel.context import Context
    from acp_agent.mcp.connection import Connection

log = logging.getLogger(__name__)

CONNECTION_MODULE = "acp_agent.mcp.connection"
LOGGED_STATES: frozenset[State] = frozenset({"ready", "failed", "disconnected"})


class ServerStatus(NamedTuple):
    """What `/mcp` shows of one server."""

    name: str
    transport: str
    state: State
    tools: int
    error: str | None


class McpSession:
    """The connections of one top-level agent's session."""

    def __init__(
        self,
        agent: Agent,
        specs: Sequence[ServerSpec],
        limits: Limits,
        hidden: frozenset[str],
        processes: ProcessRegistry | None = None,
        later: Callable[[], Awaitable[Sequence[ServerSpec]]] | None = None,
    ) -> None:
        self.agent = agent
        self._later = later
        """More servers, known once this returns (a project's, once it is trusted)."""
        self._processes = processes
        self.specs = list(specs)
        self.limits = limits
        self._hidden = hidden
        self.connections: list[Connection] = []
        self._loaded = anyio.Event()
        self._done = anyio.Event()
        self._closing = False
        self._scopes: list[Scope] = [agent.scope]
        self._registered: list[Disposer] = []
        self.tools: list[McpTool] = []
        self._startup: dict[Connection, StatusData] | None = {}
        """Until every server has settled once: their first outcomes, logged together then."""

    async def run(self) -> None:
        """Import the SDK (in a worker thread: it takes a while), connect every server, and return
        once every connection is closed."""
        try:
            if self._later is not None:
                self.specs += await self._later()
            module: Any = await anyio.to_thread.run_sync(importlib.import_module, CONNECTION_MODULE)
            if self._closing:
                return
            self.connections = [
                module.Connection(spec, self.limits, self._changed, self._hidden, self._processes, self.agent.scope)
                for spec in self.specs
            ]
            self._loaded.set()
            async with anyio.create_task_group() as tasks:
                for connection in self.connections:
                    tasks.start_soon(_serve, connection, name=f"mcp {connection.name}")
        finally:
            self._loaded.set()
            self._done.set()

    async def wait_ready(self) -> None:
        """Return once every server has started or failed: each has `startupTimeout` from its own
        start (after the SDK's import) to initialize and list its tools."""
        await self._loaded.wait()
        for connection in self.connections:
            await connection.wait_settled()

    def status(self) -> list[ServerStatus]:
        """Each server, in `mcpServers` order (connecting until the SDK is loaded)."""
        if not self.connections:
            return [ServerStatus(spec.name, spec.type, "connecting", 0, None) for spec in self.specs]
        return [
            ServerStatus(
                c.name, c.spec.type, c.state, len(c.tools) if c.state in ("ready", "disconnected") else 0, c.error
            )
            for c in self.connections
        ]

    def share_with(self, child: Agent) -> None:
        """Register the session's MCP tools in a child agent's scope, now and as they change,
        until the child is disposed (call in the child's unpublished setup window)."""
        scope = child.scope
        self._scopes.append(scope)
        for tool in self.tools:
            self._registered.append(child.ctx.get(TOOLS).register(tool, owner=scope))
        scope.add(lambda: self._scopes.remove(scope) if scope in self._scopes else None)

    def close(self) -> None:
        """Close every connection (the servers end in the background; `closed()` waits)."""
        self._closing = True
        for connection in self.connections:
            connection.close()
        self._unregister()

    async def closed(self) -> None:
        await self._done.wait()

    # -- state changes -----------------------------------------------------------------------------

    def _changed(self, connection: Connection) -> None:
        if self._closing or connection.state not in LOGGED_STATES:
            return
        listed = [tool.tool for tool in connection.tools] if connection.state == "ready" else None
        data = StatusData(
            server=connection.name,
            transport=connection.spec.type,
            state=connection.state,
            tools=listed,
            error=connection.error,
        )
        if connection.state != "disconnected":  # a server that went away keeps its tools: a call reconnects
            self._register()
        if self._startup is None:
            self.agent.session.append(StatusEvent, data, ignorable=True)
            return
        # The start-up outcomes go to the log in `mcpServers` order, whichever server is faster.
        self._startup[connection] = data
        if len(self._startup) == len(self.connections):
            startup, self._startup = self._startup, None
            for each in self.connections:
                self.agent.session.append(StatusEvent, startup[each], ignorable=True)

    def _register(self) -> None:
        """(Re-)register the tools of every server that is up, named across all servers."""
        offered = [(c, info) for c in self.connections if c.state in ("ready", "disconnected") for info in c.tools]
        names = assign((info.server, info.tool) for _, info in offered)
        self.tools = [
            McpTool(info.model_copy(update={"name": name}), connection, self.limits)
            for (connection, info), name in zip(offered, names, strict=True)
        ]
        self._unregister()
        registry = self.agent.ctx.get(TOOLS)
        self._registered = [registry.register(tool, owner=scope) for scope in self._scopes for tool in self.tools]

    def _unregister(self) -> None:
        for dispose in self._registered:
            dispose()
        self._registered = []


async def _serve(connection: Connection) -> None:
    # A connection reports its own failures; anything else it raises is a bug, which must end
    # that connection only, never the server.
    try:
        await connection.serve()
    except Exception:
        log.exception("MCP server %s: the connection failed", connection.name)


class McpService:
    """Every session's `McpSession`, by its top-level agent."""

    def __init__(self, ctx: Context, limits: Limits, hidden: Callable[[], frozenset[str]]) -> None:
        self._ctx = ctx
        self.limits = limits
        self._hidden = hidden
        self._sessions: dict[Agent, McpSession] = {}
        self._seen: WeakKeyDictionary[Any, list[ToolInfo]] = WeakKeyDictionary()
        """Per session log: the MCP tools its last `mcp/tools` event names."""

    def open(self, agent: Agent, specs: Sequence[ServerSpec]) -> None:
        """Connect `agent`'s session to `specs` (in the background) and offer it `/mcp` (when the
        composition has a command list); both go with the agent."""
        taken = {spec.name for spec in specs}
        project = [spec for spec in self.project_servers(agent) if spec.name not in taken]
        if not specs and not project:
            return
        processes = self._ctx.get(PROCESSES) if self._ctx.has(PROCESSES) else None
        later = partial(self._trusted, agent, project) if project else None
        session = McpSession(agent, specs, self.limits, self._hidden(), processes, later)
        self._sessions[agent] = session
        agent.scope.add(lambda: self._forget(agent))
        commands = self._ctx.find(COMMANDS)
        if commands is not None:
            commands.add(status_command(session), owner=agent.scope)
        self._ctx.tasks.start_soon(session.run, name=f"mcp servers of {agent.route}")

    def project_servers(self, agent: Agent) -> list[ServerSpec]:
        """The servers of the session's project (`.mcp.json`), trusted or not."""
        return project_servers(Path(agent.session.cwd)) if agent.session.cwd else []

    def trust_items(self, agent: Agent) -> list[TrustItem]:
        """The project's `.mcp.json` and what its servers run, for the trust question."""
        servers = self.project_servers(agent)
        if not servers:
            return []
        return [TrustItem(Path(agent.session.cwd or ".") / FILE_NAME, tuple(described(spec) for spec in servers))]

    async def _trusted(self, agent: Agent, servers: list[ServerSpec]) -> list[ServerSpec]:
        trust = self._ctx.find(TRUST)
        return servers if trust is not None and await trust.trusted(agent) else []

    def of(self, agent: Agent) -> McpSession | None:
        """The MCP session `agent` uses: its top-level session's."""
        return self._sessions.get(agent.ctx.get(AGENTS).top_level(agent))

    async def close(self, agent: Agent) -> None:
        """Close `agent`'s servers and wait until they are gone."""
        session = take(self._sessions, agent)
        if session is not None:
            session.close()
            await session.closed()

    async def close_all(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        for session in sessions:
            session.close()
        for session in sessions:
            await session.closed()

    def _forget(self, agent: Agent) -> None:
        session = take(self._sessions, agent)
        if session is not None:
            session.close()

    # -- hooks -----------------------------------------------------------------------------------

    def inherit(self, parent: Agent) -> Callable[[Agent], None] | None:
        """A child of `parent` uses its session's connections (subagents' `INHERIT`)."""
        session = self.of(parent)
        return session.share_with if session is not None else None

    async def before_model_call(self, caller: CallingAgent) -> None:
        """Wait for servers still connecting; log the MCP tools this call sees if they changed
        (BEFORE_MODEL_CALL listener)."""
        agent = as_agent(caller)
        session = self.of(agent)
        if session is not None:
            await session.wait_ready()
        tools = [tool.info for tool in self._ctx.get(TOOLS).visible(agent.scope) if isinstance(tool, McpTool)]
        log_ = agent.session
        if log_ not in self._seen:
            self._seen[log_] = last_tools(log_.events)
        if tools != self._seen[log_]:
            self._seen[log_] = tools
            log_.append(ToolsEvent, ToolsData(tools=tools), ignorable=True)


def status_command(session: McpSession) -> Command:
    """`/mcp`: `session`'s servers, as they are when its turn runs (no model call)."""

    def run(invocation: Invocation) -> Ticket:
        async def body(agent: Agent, turn: int) -> TurnEndReason:
            lines = [texts.status_line(s.name, s.transport, s.state, s.tools, s.error) for s in session.status()]
            return await reply(texts.status_report(lines))(agent, turn)

        return invocation.followup(invocation.content, COMMAND_SOURCE, body)

    return Command("mcp", texts.COMMAND_DESCRIPTION, run)


MCP: Final = ServiceKey[McpService]("mcp")
"""`ctx.get(MCP)`: every session's MCP servers (a composition may leave it out)."""


def last_tools(events: Sequence[SessionEvent]) -> list[ToolInfo]:
    """The MCP tools the last `mcp/tools` event of a log names (none: no such event)."""
    for event in reversed(events):
        if isinstance(event, ToolsEvent):
            return list(event.data.tools)
    return []


def logged_tools(events: Sequence[SessionEvent], limits: Limits) -> dict[str, McpTool]:
    """The MCP tools a log's `mcp/tools` events name, by agent tool name, to present the calls of
    a stored session (its servers are not connected yet while it is replayed)."""
    return {
        info.name: McpTool(info, None, limits)
        for event in events
        if isinstance(event, ToolsEvent)
        for info in event.data.tools
    }
