"""Start-up through the real server process: what it loads and starts before its first session is
answered is only what that needs (how long it takes is `bench/startup.py`'s figure)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

LATER = ("httpx", "mcp", "jsonschema", "secrets", "hashlib", "acp_agent.snapshot")
"""Loaded once a session needs them (a model call, an MCP server, a long MCP tool name), or never
by the server. A name the dependencies import themselves cannot count (pydantic 2.14 imports
`secrets` and `hashlib`): with such a version the check holds for the others only."""


DEPENDENCIES = "import anyio, yaml\nfrom pydantic import BaseModel, Field"
"""What the server cannot start without: what these import themselves is not the server's doing
(pydantic 2.14's `pydantic.types` imports `secrets`, for one)."""


def lines(fd: int, count: int, timeout: float = 60) -> list[bytes]:
    """The first `count` lines read from `fd`, within `timeout` seconds (a server that never
    answers fails the test instead of hanging it)."""
    data, deadline = b"", time.monotonic() + timeout
    while data.count(b"\n") < count:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no answer within {timeout} s: {data!r}"
        chunk = os.read(fd, 65536)
        assert chunk, f"the server exited before answering: {data!r}"
        data += chunk
    return data.split(b"\n")[:count]


def imported(command: list[str], env: dict[str, str], stderr: bytes) -> set[str]:
    """The modules `-X importtime` listed, less those an interpreter with the same environment
    imports for the dependencies alone (a coverage run's own modules among them)."""
    names = {line.rsplit("|", 1)[1].strip() for line in stderr.decode().splitlines() if "|" in line}
    floor = subprocess.run([*command, "-c", DEPENDENCIES], capture_output=True, env=env, check=True).stderr
    return names - {line.rsplit("|", 1)[1].strip() for line in floor.decode().splitlines() if "|" in line}


def test_a_first_session_is_answered_without_the_model_client_mcp_or_a_watchdog(tmp_path: Path) -> None:
    env = {**os.environ, "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    python = [sys.executable, "-X", "importtime"]
    importtime = tmp_path / "importtime"
    with importtime.open("wb") as stderr:  # a file: a pipe read only at the end could fill and block the server
        server = subprocess.Popen(
            [*python, "-m", "acp_agent"],  # the packaged composition
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env,
        )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    for frame in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ):
        server.stdin.write(json.dumps(frame).encode() + b"\n")
    server.stdin.flush()
    answered = [json.loads(line) for line in lines(server.stdout.fileno(), 2)]
    assert [answer["id"] for answer in answered] == [1, 2] and "sessionId" in answered[1]["result"]
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    loaded = imported(python, env, importtime.read_bytes())
    assert children == []  # the process watchdog starts with the first command
    assert "acp_agent.acp.stdio" in loaded and [name for name in LATER if name in loaded] == []
