"""Serve ACP on this process's stdin/stdout: stdout carries JSON-RPC frames and nothing else.

Stdout is made non-blocking while the server runs (as asyncio's own pipe transports make it) and
written on the event loop; its mode is restored when the server ends.

One shutdown path, whatever ends the server: stdin's end, SIGTERM, SIGINT or SIGHUP stop the
reading; running turns are cancelled (their prompts answer `cancelled`), the requests finish, the
context shuts down (agents disposed, session logs closed), every process the server started is
ended, and `serve` returns (the process exits 0).

What stdin is decides how the server starts (`stdin_of`): a closed stdin or `/dev/null` means no
client, and the server returns at once; a terminal means a person started it by hand, who is told
on stderr what it is before it serves; anything else (a pipe, a socket, a regular file: its frames,
then its end) is served as it is.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from enum import Enum
from typing import TextIO

import anyio
from anyio.abc import TaskStatus

from acp_agent.acp.connection import Connection
from acp_agent.acp.plugin import CONNECTION, ConnectionConfig
from acp_agent.acp.server import METHODS, AcpServer
from acp_agent.kernel.context import Context
from acp_agent.processes.registry import PROCESSES, ProcessRegistry
from acp_agent.session.persistence import SESSIONS

log = logging.getLogger(__name__)

SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
READ_SIZE = 64 * 1024
TERMINAL_HINT = (
    "acp-agent: this is an Agent Client Protocol server: it reads JSON-RPC requests on stdin and"
    " answers on stdout, for an editor to start (in Zed: an entry of agent_servers; see the README);"
    " `acp-agent demo` shows it at work. Serving this terminal now (Ctrl-D ends)."
)


class Stdin(Enum):
    """What the process was given as stdin."""

    NONE = "none"
    """Closed, or `/dev/null`: nobody will ever write a request."""
    TERMINAL = "terminal"
    """A person at a terminal."""
    STREAM = "stream"
    """A pipe, a socket, a file: a client's requests."""


def stdin_of(stdin: TextIO | None) -> Stdin:
    """What `stdin` (`sys.stdin`: None when descriptor 0 was closed at start) is."""
    if stdin is None:
        return Stdin.NONE
    try:
        fd = stdin.fileno()
        if os.path.samestat(os.fstat(fd), os.stat(os.devnull)):
            return Stdin.NONE
    except (OSError, ValueError):  # closed since (ValueError: the file object was)
        return Stdin.NONE
    return Stdin.TERMINAL if os.isatty(fd) else Stdin.STREAM


async def serve(ctx: Context, stdin: int, stdout: int, processes: ProcessRegistry) -> None:
    """Run `ctx` and answer the client on the `stdin` and `stdout` descriptors until stdin ends
    or a shutdown signal arrives; then cancel turns, close logs, end every process, return."""
    connection = ctx.find(CONNECTION) or ConnectionConfig()
    blocking = os.get_blocking(stdout)
    os.set_blocking(stdout, False)
    store = ctx.find(SESSIONS)
    flush_logs = store.flush if store is not None else None
    conn = Connection(METHODS, writer(stdout, flush_logs), max_frame_bytes=connection.max_frame_bytes)
    server = conn.state = AcpServer(ctx, conn)
    ctx.scope.add(ctx.provide(PROCESSES, processes))
    try:
        async with ctx.running(), anyio.create_task_group() as signals:
            await signals.start(_stop_on_signals, conn)
            await conn.serve(read_chunks(stdin), on_eof=server.close)
            signals.cancel_scope.cancel()
    finally:
        processes.close()
        os.set_blocking(stdout, blocking)


def writer(fd: int, flush_logs: Callable[[], None] | None = None) -> Callable[[bytes], Awaitable[None]]:
    """Writes to the non-blocking `fd` on the event loop (no thread, no copy into a buffer of
    its own): what the pipe takes at once is written at once; while it is full, the loop serves
    the rest until it drains. Once the client has closed its end, what it can no longer read is
    dropped. `flush_logs` runs first: the session logs' held lines reach the operating system
    before any frame that may show them (`SessionStore.flush`)."""
    gone = False

    async def write(data: bytes) -> None:
        nonlocal gone
        if flush_logs is not None:
            flush_logs()
        view = memoryview(data)
        while view and not gone:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(fd)
            except OSError as exc:  # the client closed its end (it died, or hung up): nobody reads
                gone = True
                log.warning("stdout is closed (%s); dropping what the client can no longer read", exc)

    return write


async def _stop_on_signals(conn: Connection, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """A shutdown signal ends the reading as stdin's end would; later ones change nothing."""
    with anyio.open_signal_receiver(*SHUTDOWN_SIGNALS) as received:
        task_status.started()
        async for signum in received:
            log.info("%s: shutting down", signal.Signals(signum).name)
            conn.stop()


async def read_chunks(fd: int) -> AsyncIterator[bytes]:
    """What `fd` holds, a read of up to READ_SIZE at a time (not waiting to fill it), until its
    end: the connection cuts frames itself, so a line is never buffered past `maxFrameBytes`.
    The reads are made on the event loop, so a signal cancels the wait for input at once."""
    # Only pipes, sockets and terminals can be watched by the event loop; anything else (a
    # regular file, a device) is always readable.
    mode = os.fstat(fd).st_mode
    waits = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
    while True:
        if waits:
            await anyio.wait_readable(fd)
        else:
            await anyio.lowlevel.checkpoint()
        chunk = os.read(fd, READ_SIZE)
        if not chunk:
            return
        yield chunk


def serve_stdio(ctx: Context) -> None:
    """Take over stdout for the protocol (stray prints go to stderr) and serve until shutdown;
    without a client (`Stdin.NONE`), return at once."""
    stdin = stdin_of(sys.stdin)
    if stdin is Stdin.NONE:
        log.info("stdin is closed or /dev/null: no client to serve")
        return
    if stdin is Stdin.TERMINAL:
        print(TERMINAL_HINT, file=sys.stderr, flush=True)
    protocol_out = sys.stdout.fileno()
    sys.stdout = sys.stderr
    anyio.run(serve, ctx, sys.stdin.fileno(), protocol_out, ProcessRegistry.for_this_process())
