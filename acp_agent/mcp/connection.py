"""One connection to one MCP server, through the official SDK: stdio, streamable HTTP or SSE.

The SDK is used here and in `results.py` (imported by `sdk.py`); the session imports this module
in a worker thread, and only for a session that has servers (the import takes a part of a second).

A connection is a task (`serve`) that holds the SDK's transport and `ClientSession` contexts for
as long as the server is up: it starts the server (stdio) or reaches it (http, sse), initializes,
lists the tools, then waits until the connection is closed, the server goes away (its process
exits, the transport fails) or it says its tools changed (`notifications/tools/list_changed`:
listed again). A server that went away is connected again by the next call of one of its tools,
once per call (`call`). Where it is is a `Phase`, changed in one method (`_enter`) that refuses a
move `TRANSITIONS` does not list and wakes every wait of the connection (one event, replaced at
each change); what the session hears (`state`, `error`) is reported at given moves.

A stdio server runs in a process group of its own (the SDK starts it in a new session); closing
ends it the SDK's way (stdin closed, then SIGTERM, then SIGKILL to the group) and then kills what
is left of the group, so nothing the server started outlives the connection. Its stderr is read
here: every line goes to the agent's stderr log, the last few into failure reports.
"""

from __future__ import annotations

import logging
import os
import signal
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from enum import Enum
from typing import Any, Final

import anyio
import httpx
from anyio.abc import Process
from pydantic import ValidationError

from acp_agent.kernel.scope import Scope
from acp_agent.kernel.states import Moves
from acp_agent.mcp import texts
from acp_agent.mcp.environment import server_environment
from acp_agent.mcp.events import State, ToolInfo
from acp_agent.mcp.limits import Limits
from acp_agent.mcp.results import convert
from acp_agent.mcp.sdk import (
    ClientSession,
    McpError,
    http_client,
    next_request_id,
    reporting_process,
    sse_client,
    streamable_http_client,
    types,
)
from acp_agent.mcp.sdk import stdio as sdk_stdio
from acp_agent.mcp.servers import HttpServer, ServerSpec, StdioServer
from acp_agent.processes.registry import ProcessRegistry
from acp_agent.tools.base import ToolCallContext, ToolResult

log = logging.getLogger(__name__)
stderr_log = logging.getLogger("acp_agent.mcp.stderr")

STDERR_LINES = 10
"""How many of a stdio server's last stderr lines a failure report quotes."""
STDERR_DRAIN_SECONDS = 1.0
"""How long a stopped server's stderr may take to reach its end (a child still holding it)."""
NOT_CONNECTED = "mcp_not_connected"
CALL_FAILED = "mcp_call_failed"


class Down(Exception):
    """The server went away; the message says why."""


class Phase(Enum):
    """Where a connection is (`Connection.phase`); `TRANSITIONS` says how it moves on. What it
    reports to the session (`Connection.state`, logged as `mcp/status`) is said at given moves."""

    CONNECTING = "connecting"
    """An attempt starts the server (stdio) or reaches it, initializes, lists its tools. A server
    that goes away meanwhile ends the attempt once the SDK returns (it is not interrupted)."""
    READY = "ready"
    """Connected, its tools listed."""
    RELISTING = "relisting"
    """Connected; the server said its tools changed, and they are being listed again."""
    ENDING = "ending"
    """Connected until now: the server went away, and the SDK closes the connection."""
    FAILED = "failed"
    """The last attempt ended before the server was ready; a call tries again."""
    DISCONNECTED = "disconnected"
    """The server went away after it was ready (its tools are kept); a call connects again."""
    CLOSING = "closing"
    """`close()` came: the attempt under way, if any, ends; no other starts."""
    CLOSED = "closed"
    """`serve` has returned."""


TRANSITIONS: Final = Moves(
    {
        Phase.CONNECTING: {Phase.READY, Phase.FAILED, Phase.CLOSING},
        Phase.READY: {Phase.RELISTING, Phase.ENDING, Phase.DISCONNECTED, Phase.CLOSING},
        Phase.RELISTING: {Phase.READY, Phase.ENDING, Phase.DISCONNECTED, Phase.CLOSING},
        Phase.ENDING: {Phase.DISCONNECTED, Phase.CLOSING},
        Phase.FAILED: {Phase.CONNECTING, Phase.CLOSING},
        Phase.DISCONNECTED: {Phase.CONNECTING, Phase.CLOSING},
        Phase.CLOSING: {Phase.CLOSED},
        Phase.CLOSED: set(),
    }
)
"""Each phase's next phases: an attempt's outcome (connecting to ready or failed), a tools-changed
notification and the listing it asks for (ready to relisting and back), the server going away
(ready or relisting to ending, then disconnected; straight to disconnected when the transport
fails), a call that wants the server again (failed or disconnected to connecting), `close()`."""
UP: Final = frozenset({Phase.READY, Phase.RELISTING})
"""Connected: a call goes through the session."""
UNSETTLED: Final = frozenset({Phase.CONNECTING, Phase.RELISTING})
"""What a model call waits for: an attempt's outcome, the tools the server said changed."""


class Connection:
    """A session's connection to `spec`; `on_change(self)` hears each state or tool-list change."""

    def __init__(
        self,
        spec: ServerSpec,
        limits: Limits,
        on_change: Callable[[Connection], None],
        hidden: frozenset[str] = frozenset(),
        processes: ProcessRegistry | None = None,
        owner: Scope | None = None,
    ) -> None:
        self.spec = spec
        self._processes = processes
        """The server's process registry: a stdio server is a command group of its own there, so
        the watchdog ends it and what it started if the server is killed (kill -9)."""
        self._owner = owner
        self.limits = limits
        self._hidden = hidden
        """Environment variables a stdio server never gets (the agent's credentials)."""
        self._on_change = on_change
        self.state: State = "connecting"
        self.error: str | None = None
        self.tools: list[ToolInfo] = []
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._session: ClientSession | None = None
        self._phase = Phase.CONNECTING
        self._changed = anyio.Event()
        """Set, and replaced, at each change of phase: what every wait of this class waits on."""
        self._why = ""
        """Why the current attempt's connection ends (the first reason given; empty: it does not)."""
        self._unlisted = 0
        """Tools-changed notifications no listing begun since covers (the next listing does)."""
        self.pgid: int | None = None
        """The stdio server's process group while it runs (for the process registry)."""
        self._exit_code: int | None = None
        self._not_protocol = 0
        """Stdout lines of the current attempt's server that were not JSON-RPC."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def phase(self) -> Phase:
        return self._phase

    def _enter(self, phase: Phase) -> None:
        """Move to `phase` and wake every wait: the one place the phase changes."""
        self._phase = TRANSITIONS.move(f"MCP server {self.name}", self._phase, phase)
        self._changed.set()
        self._changed = anyio.Event()

    async def _until(self, done: Callable[[], bool]) -> None:
        while not done():
            await self._changed.wait()

    async def serve(self) -> None:
        """Connect, stay connected, connect again when a call asks; return once closed."""
        while self._phase is Phase.CONNECTING:
            await self._attempt()
            await self._until(lambda: self._phase in (Phase.CONNECTING, Phase.CLOSING))  # a call, or `close`
        self._enter(Phase.CLOSED)
        self._report("closed", self.error)

    async def wait_settled(self) -> None:
        """Return once the current attempt to connect has an outcome, and the tools the server
        said changed are listed again (a model call after that notification sees them)."""
        await self._until(lambda: self._phase not in UNSETTLED)

    def close(self) -> None:
        """End the connection (a graceful close of the server); `serve` returns once it is over."""
        if self._phase not in (Phase.CLOSING, Phase.CLOSED):
            self._end("the session was closed")
            self._enter(Phase.CLOSING)

    # -- one connection, from start to end -------------------------------------------------------

    async def _attempt(self) -> None:
        self._why = ""
        self._exit_code = None
        self._not_protocol = 0
        self.stderr.clear()  # a failure report quotes this attempt's server
        self._report("connecting", None)
        was_ready = False
        try:
            async with AsyncExitStack() as stack:
                session = await self._open(stack)
                self._session, was_ready = session, True
                if self._phase is Phase.CONNECTING:  # else closed meanwhile
                    self._enter(Phase.READY)
                    self._report("ready", None)
                    if self._why:  # the server went away while connecting
                        self._enter(Phase.ENDING)
                    elif self._unlisted:  # its tools changed while they were listed
                        self._enter(Phase.RELISTING)
                while True:
                    await self._until(lambda: self._phase is not Phase.READY)
                    if self._phase is not Phase.RELISTING:
                        break
                    await self._list(session)
                    self._report("ready", None)
                    if self._phase is Phase.RELISTING and not self._unlisted:
                        self._enter(Phase.READY)
                # Leaving the stack closes the session and the transport: the SDK ends the server
                # (stdin closed, 2 s to exit, SIGTERM, 2 s more, SIGKILL), bounded by its own waits.
                self._session = None
            reason = texts.exited(self._exit_code) if self._exit_code is not None else self._why
        except Exception as exc:  # whatever the SDK or the transport raised: the server is unusable
            reason = self._describe(exc)
            log.warning("MCP server %s: %s", self.name, reason, exc_info=log.isEnabledFor(logging.DEBUG))
        finally:
            self._session = None
            self._kill_group()
            if self._not_protocol:
                log.warning(
                    "MCP server %s: %d lines of its stdout were not JSON-RPC (ignored)", self.name, self._not_protocol
                )
        if self._phase is not Phase.CLOSING:
            self._enter(Phase.DISCONNECTED if was_ready else Phase.FAILED)
            self._report("disconnected" if was_ready else "failed", reason)

    async def _open(self, stack: AsyncExitStack) -> ClientSession:
        """The transport, the SDK session, initialized, and the tools listed within the startup
        timeout (the contexts are entered outside the timeout's scope: they outlive it)."""
        read, write = await stack.enter_async_context(self._transport())
        session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._on_message))
        with anyio.fail_after(self.limits.startup_timeout):
            await session.initialize()
            await self._list(session)
        return session

    def _transport(self) -> Any:
        spec = self.spec
        if isinstance(spec, StdioServer):
            return self._stdio(spec)
        headers = {header.name: header.value for header in spec.headers}
        if spec.type == "sse":
            return _streams(sse_client(spec.url, headers=headers, timeout=self.limits.startup_timeout))
        client = http_client(headers, httpx.Timeout(self.limits.startup_timeout, read=None))
        return _http(client, spec)

    @asynccontextmanager
    async def _stdio(self, spec: StdioServer) -> AsyncIterator[tuple[Any, Any]]:
        env = server_environment(sdk_stdio.get_default_environment(), spec.env, self._hidden)
        group = None
        if self._processes is not None and self._owner is not None:
            group = self._processes.group(self._owner)
            env.update(group.env)  # its marker: what it starts is found even outside its group
        # `env` is complete already: the SDK adds its defaults to it again, which changes nothing.
        params = sdk_stdio.StdioServerParameters(command=spec.command, args=spec.args, env=env)
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        errlog = os.fdopen(write_fd, "w")
        started: list[Process] = []

        def report(process: Process) -> None:
            started.append(process)
            self.pgid = process.pid  # the SDK starts it in a new session: its own group
            if group is not None:
                group.started(process.pid)  # before any await, or the registry takes it for an orphan
            errlog.close()  # the server holds its copy: reading ends when every holder is gone

        try:
            with reporting_process(report):
                async with anyio.create_task_group() as tasks:
                    drained = anyio.Event()
                    tasks.start_soon(self._read_stderr, read_fd, drained)
                    try:
                        async with sdk_stdio.stdio_client(params, errlog=errlog) as streams:
                            tasks.start_soon(self._watch_exit, started[0])
                            yield streams
                    finally:
                        if started:
                            self._exit_code = started[0].returncode
                        else:  # it never started (no such command): nothing else holds the write end
                            errlog.close()
                        self._kill_group()
                        if group is not None and started:
                            group.exited()
                        with anyio.move_on_after(STDERR_DRAIN_SECONDS):
                            await drained.wait()  # its last lines, for the failure report
                        tasks.cancel_scope.cancel()
        finally:
            if not errlog.closed:
                errlog.close()
            os.close(read_fd)

    async def _read_stderr(self, fd: int, drained: anyio.Event) -> None:
        pending = b""
        while True:
            await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                self._stderr_line(line)
        if pending:
            self._stderr_line(pending)
        drained.set()

    def _stderr_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip()
        if line:
            self.stderr.append(line)
            stderr_log.warning("[mcp %s] %s", self.name, line)

    async def _watch_exit(self, process: Process) -> None:
        code = await process.wait()
        self._end(texts.exited(code))

    def _kill_group(self) -> None:
        """Whatever the server started and left behind in its group goes with it."""
        if self.pgid is not None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)
            self.pgid = None

    def _end(self, why: str) -> None:
        """The current connection ends (closed, or the server went away): a connected one at once,
        one still connecting once the SDK returns (`_attempt`)."""
        if not self._why:
            self._why = why
        if self._phase in UP:
            self._enter(Phase.ENDING)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ToolListChangedNotification
        ):
            self._unlisted += 1
            if self._phase is Phase.READY:
                self._enter(Phase.RELISTING)
        elif isinstance(message, ValidationError):  # a stdout line that is not JSON-RPC
            self._not_protocol += 1
            if self._not_protocol == 1:
                log.warning(
                    "MCP server %s wrote a line that is not JSON-RPC on stdout; such lines are ignored (counted)",
                    self.name,
                )
        elif isinstance(message, Exception):  # a transport error the SDK passes on
            log.debug("MCP server %s: transport error %r", self.name, message)

    async def _list(self, session: ClientSession) -> None:
        """List the server's tools (every change announced before it began is in the list)."""
        covered = self._unlisted
        self.tools = await self._list_tools(session)
        self._unlisted -= covered

    async def _list_tools(self, session: ClientSession) -> list[ToolInfo]:
        listed: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            listed += page.tools
            cursor = page.nextCursor
            if not cursor:
                return [_info(self.name, tool) for tool in listed]

    def _report(self, state: State, error: str | None) -> None:
        """What the session hears (`state` and `error`, logged as `mcp/status`), at given moves."""
        self.state, self.error = state, error
        self._on_change(self)

    def _describe(self, exc: BaseException) -> str:
        leaf = _leaf(exc)
        if isinstance(leaf, httpx.HTTPStatusError) and leaf.response.status_code == 401:
            return texts.NEEDS_AUTH
        if isinstance(leaf, TimeoutError):
            why = texts.timed_out(self.name, self.limits.startup_timeout)
        elif isinstance(leaf, McpError) and self._exit_code is not None:
            why = texts.exited(self._exit_code)  # the session failed because the server exited
        else:
            why = str(leaf) or type(leaf).__name__
        return why + (texts.stderr_tail(list(self.stderr)) if self.stderr else "")

    # -- calls ------------------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], call: ToolCallContext, limits: Limits) -> ToolResult:
        """Call `tool` of this server; a server that went away is connected again first (once)."""
        session = self._connected()
        if session is None:
            await self._until(lambda: self._phase is not Phase.ENDING)  # an end under way first
            if self._phase in (Phase.FAILED, Phase.DISCONNECTED):  # not connecting now: one attempt for this call
                self._enter(Phase.CONNECTING)  # `serve` runs it
            await self._until(lambda: self._phase is not Phase.CONNECTING)
            session = self._connected()
            if session is None:
                return ToolResult.failure(texts.not_connected(self.name, self.error or "unknown"), NOT_CONNECTED)
        request_id = next_request_id(session)  # the id `call_tool` is about to use (to cancel it)
        try:
            with anyio.fail_after(limits.call_timeout):
                result = await self._unless_down(session.call_tool(tool, arguments))
        except TimeoutError:
            await _cancel_request(session, request_id, texts.call_timed_out(limits.call_timeout))
            return ToolResult.failure(texts.call_timed_out(limits.call_timeout), "timeout")
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await _cancel_request(session, request_id, texts.CANCELLED)
            raise
        except (Down, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return await self._lost()
        except McpError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                return await self._lost()
            return ToolResult.failure(exc.error.message, CALL_FAILED)
        # The server said during the call that its tools changed (it sends that before the
        # result): the call ends once they are listed again, so the new list is in the log
        # before the call's result, whatever the two tasks' timing.
        with anyio.move_on_after(limits.call_timeout):
            await self._until(lambda: self._phase is not Phase.RELISTING)
        tool_result, images = convert(result, limits.max_output_bytes)
        if images:
            call.show(images=images)
        return tool_result

    def _connected(self) -> ClientSession | None:
        return self._session if self._phase in UP else None

    async def _lost(self) -> ToolResult:
        """The server went away during a call: once the connection has ended, say why."""
        self._end(texts.CONNECTION_LOST)
        await self._until(lambda: self._phase not in (*UP, Phase.ENDING))
        return ToolResult.failure(texts.not_connected(self.name, self.error or texts.CONNECTION_LOST), NOT_CONNECTED)

    async def _unless_down(self, request: Any) -> types.CallToolResult:
        """Await `request`, or raise `Down` as soon as the server goes away."""
        outcome: list[types.CallToolResult] = []
        failure: list[Exception] = []
        async with anyio.create_task_group() as race:

            async def run() -> None:
                try:
                    outcome.append(await request)
                except Exception as exc:  # handed to the caller, not wrapped in a group
                    failure.append(exc)
                race.cancel_scope.cancel()

            race.start_soon(run)
            await self._until(lambda: self._phase not in UP)
            race.cancel_scope.cancel()
        if failure:
            raise failure[0]
        if outcome:
            return outcome[0]
        raise Down(self._why)


async def _cancel_request(session: ClientSession, request_id: int, reason: str) -> None:
    """Tell the server the call is abandoned (MCP `notifications/cancelled`), if it still listens."""
    notification = types.ClientNotification(
        types.CancelledNotification(params=types.CancelledNotificationParams(requestId=request_id, reason=reason))
    )
    with anyio.move_on_after(1), suppress(Exception):
        await session.send_notification(notification)


@asynccontextmanager
async def _streams(transport: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (read, write):
        yield read, write


@asynccontextmanager
async def _http(client: httpx.AsyncClient, spec: HttpServer) -> AsyncIterator[tuple[Any, Any]]:
    async with client, streamable_http_client(spec.url, http_client=client) as (read, write, _):
        yield read, write


def _leaf(exc: BaseException) -> BaseException:
    """The first exception that is not a group (the SDK's task groups wrap what failed)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _info(server: str, tool: types.Tool) -> ToolInfo:
    annotations = tool.annotations
    return ToolInfo(
        name="",  # assigned by the session, across all its servers
        server=server,
        tool=tool.name,
        description=tool.description or "",
        input_schema=tool.inputSchema,
        title=tool.title or (annotations.title if annotations is not None else None),
        read_only=bool(annotations and annotations.readOnlyHint),
        destructive=bool(annotations and annotations.destructiveHint),
        open_world=bool(annotations and annotations.openWorldHint),
    )
