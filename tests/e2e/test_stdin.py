"""`acp-agent` started on whatever stdin it is given, as real processes: `/dev/null` and a closed
stdin mean no client (exit 0 at once), a regular file is served to its end, a terminal is told
what the server is on stderr and then served. None of them ends in a traceback."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from acp_agent.acp.stdio import TERMINAL_HINT
from tests.e2e.test_startup import lines

SERVER = [sys.executable, "-m", "acp_agent"]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}


def frame(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_dev_null_and_a_closed_stdin_mean_no_client(tmp_path: Path) -> None:
    env = environment(tmp_path)
    on_null = subprocess.run(SERVER, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=60)
    closed = subprocess.run(["sh", "-c", 'exec "$@" <&-', "sh", *SERVER], capture_output=True, env=env, timeout=60)
    for done in (on_null, closed):
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_regular_file_is_served_to_its_end(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}}
    requests.write_bytes(frame(INITIALIZE) + frame(new))
    with requests.open("rb") as stdin:
        done = subprocess.run(SERVER, stdin=stdin, capture_output=True, env=environment(tmp_path), timeout=60)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers if "id" in a] == [1, 2]
    assert all("result" in a for a in answers if "id" in a)


def test_a_terminal_is_told_what_the_server_is_then_served(tmp_path: Path) -> None:
    terminal, its_side = pty.openpty()
    server = subprocess.Popen(
        SERVER, stdin=its_side, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(tmp_path)
    )
    os.close(its_side)
    assert server.stdout is not None and server.stderr is not None
    try:
        assert lines(server.stderr.fileno(), 1) == [TERMINAL_HINT.encode()]
        os.write(terminal, frame(INITIALIZE))  # typed (or pasted) at the terminal: one line
        (answer,) = lines(server.stdout.fileno(), 1)
        assert json.loads(answer)["result"]["protocolVersion"] == 1
        os.write(terminal, b"\x04")  # Ctrl-D at the start of a line: the end of stdin
        assert server.wait(timeout=60) == 0
        assert b"Traceback" not in server.stderr.read()
    finally:
        server.kill()
        server.wait()
        os.close(terminal)
        server.stdout.close()
        server.stderr.close()
