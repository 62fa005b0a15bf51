"""A scenario's MCP servers as the client hands them to the server under test: paths made
absolute, and the HTTP and SSE servers it serves started on loopback ports for the run."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from acp_agent.snapshot.errors import InvalidScenario
from acp_agent.snapshot.scenario import INPUT, LoadSession, McpServer, NewSession, Scenario

PYTHON = "python"
"""A `command` (or `serve` head) meaning the interpreter the runner runs under."""
READY_SECONDS = 60.0
"""How long a served MCP server may take to accept connections. It starts in about a second (the
SDK's imports); on a loaded machine (the whole suite on two shared cores) it has taken more than
15 s, and only a server that never comes up waits this long."""

Resolve = Callable[[Sequence[McpServer]], list[dict[str, Any]]]


@asynccontextmanager
async def serving(directory: Path, scenario: Scenario) -> AsyncIterator[Resolve]:
    """Start the scenario's served MCP servers; yield what turns a step's `mcpServers` into ACP's.
    The served servers are stopped on exit."""
    declared = [
        entry
        for step in scenario.steps
        if isinstance(step, (NewSession, LoadSession))
        for entry in step.mcp_servers
        if entry.serve
    ]
    urls: dict[str, str] = {}
    processes: list[Process] = []
    try:
        for entry in declared:
            if entry.name not in urls:
                port = _free_port()
                command = [*_absolute(directory, entry.serve), str(port)]
                processes.append(await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
                urls[entry.name] = f"http://127.0.0.1:{port}{entry.path}"
        for url in urls.values():
            await _accepting(url)

        def resolve(entries: Sequence[McpServer]) -> list[dict[str, Any]]:
            return [_acp(directory, entry, urls) for entry in entries]

        yield resolve
    finally:
        with anyio.CancelScope(shield=True):
            for process in processes:
                process.terminate()
                await process.wait()


def _acp(directory: Path, entry: McpServer, urls: dict[str, str]) -> dict[str, Any]:
    if entry.type == "stdio":
        if entry.command is None:
            raise InvalidScenario(directory / INPUT, f"MCP server {entry.name!r}: a stdio server needs a command")
        command, *args = _absolute(directory, [entry.command, *entry.args])
        return {"name": entry.name, "command": command, "args": args, "env": [e.dump() for e in entry.env]}
    url = urls.get(entry.name, entry.url)
    if url is None:
        raise InvalidScenario(
            directory / INPUT, f"MCP server {entry.name!r}: an {entry.type} server needs a url or serve"
        )
    return {"type": entry.type, "name": entry.name, "url": url, "headers": [h.dump() for h in entry.headers]}


def _absolute(directory: Path, command: Sequence[str]) -> list[str]:
    """`python` as this interpreter, and each word naming a file of the scenario as its path
    (not resolved: the snapshot shows it as `{{scenario}}/<word>`, the same on every machine)."""
    head, *rest = command
    words = [sys.executable if head == PYTHON else head, *rest]
    return [
        str(directory / word) if not Path(word).is_absolute() and (directory / word).exists() else word
        for word in words
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _accepting(url: str) -> None:
    port = int(url.split(":")[2].split("/")[0])
    with anyio.fail_after(READY_SECONDS):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
                continue
            await stream.aclose()
            return
