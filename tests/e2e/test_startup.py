"""Start-up through the real server process: what it loads and starts before its first session is
answered is only what that needs (how long it takes is `bench/startup.py`'s figure)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LATER = ("httpx", "mcp", "jsonschema", "secrets", "hashlib", "acp_agent.snapshot")
"""Loaded once a session needs them (a model call, an MCP server, a long MCP tool name), or never
by the server."""


DEPENDENCIES = "import anyio, yaml\nfrom pydantic import BaseModel, Field"
"""What the server cannot start without: what these import themselves is not the server's doing
(pydantic 2.14's `pydantic.types` imports `secrets`, for one)."""


def imported(command: list[str], env: dict[str, str], stderr: bytes) -> set[str]:
    """The modules `-X importtime` listed, less those an interpreter with the same environment
    imports for the dependencies alone (a coverage run's own modules among them)."""
    names = {line.rsplit("|", 1)[1].strip() for line in stderr.decode().splitlines() if "|" in line}
    floor = subprocess.run([*command, "-c", DEPENDENCIES], capture_output=True, env=env, check=True).stderr
    return names - {line.rsplit("|", 1)[1].strip() for line in floor.decode().splitlines() if "|" in line}


def test_a_first_session_is_answered_without_the_model_client_mcp_or_a_watchdog(tmp_path: Path) -> None:
    env = {**os.environ, "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    python = [sys.executable, "-X", "importtime"]
    server = subprocess.Popen(
        [*python, "-m", "acp_agent"],  # the packaged composition
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    for frame in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ):
        server.stdin.write(json.dumps(frame).encode() + b"\n")
    server.stdin.flush()
    answered = [json.loads(server.stdout.readline()) for _ in range(2)]
    assert [answer["id"] for answer in answered] == [1, 2] and "sessionId" in answered[1]["result"]
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    server.stdin.close()
    loaded = imported(python, env, server.stderr.read())
    assert server.wait() == 0
    assert children == []  # the process watchdog starts with the first command
    assert "acp_agent.acp.stdio" in loaded and [name for name in LATER if name in loaded] == []
