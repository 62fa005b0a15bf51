"""Serve ACP on this process's stdin/stdout: stdout carries JSON-RPC frames and nothing else."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import BinaryIO

import anyio

from acp_agent.acp.connection import Connection
from acp_agent.acp.plugin import CONNECTION, ConnectionConfig
from acp_agent.acp.server import METHODS, AcpServer
from acp_agent.kernel.context import Context

READ_SIZE = 64 * 1024


async def serve(ctx: Context, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Run `ctx` and answer the client until stdin ends; then cancel turns, flush logs, return."""
    reader = anyio.wrap_file(stdin)
    writer = anyio.wrap_file(stdout)

    async def write(data: bytes) -> None:
        await writer.write(data)
        await writer.flush()

    async def chunks() -> AsyncIterator[bytes]:
        # Whatever the pipe holds, up to READ_SIZE (read1 does not wait to fill it): the
        # connection cuts frames itself, so a line is never buffered past `maxFrameBytes`.
        while chunk := await reader.read1(READ_SIZE):
            yield chunk

    connection = ctx.find(CONNECTION) or ConnectionConfig()
    conn = Connection(METHODS, write, max_frame_bytes=connection.max_frame_bytes)
    server = conn.state = AcpServer(ctx, conn)
    async with ctx.running():
        await conn.serve(chunks(), on_eof=server.close)


def serve_stdio(ctx: Context) -> None:
    """Take over stdout for the protocol (stray prints go to stderr) and serve until EOF."""
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    anyio.run(serve, ctx, sys.stdin.buffer, protocol_out)
