"""MCP servers through the real server: their processes end with their session (looked for by
pid), they never get the agent's credentials, and servers nobody here wrote work as tools
(`mcp-server-time`, `mcp-server-git`, and `@modelcontextprotocol/server-everything` when `.ci/run`
installed it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.mcp import texts
from tests.e2e.test_server import Scripted, message_text, result_of, session_log
from tests.e2e.wire import Wire
from tests.paths import FIXTURES, ROOT

pytestmark = pytest.mark.anyio

FIXTURE_SERVER = FIXTURES / "mcp" / "server.py"
EVERYTHING = ROOT / ".ci" / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
"""Where `.ci/run` installs `@modelcontextprotocol/server-everything` (when npm exists)."""
SECRET = "ACP_AGENT_TEST_SECRET"


def fixture(name: str = "fixture", env: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"name": name, "command": sys.executable, "args": [str(FIXTURE_SERVER)], "env": env or []}


def call(call_id: str, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"toolCalls": [{"id": call_id, "name": tool, "arguments": arguments or {}}]}


def results(wire: Wire, session_id: str) -> dict[str, str]:
    """Each finished tool call's text, by call id."""
    found = {}
    for params in wire.updates(session_id):
        update = params["update"]
        if update.get("status") in ("completed", "failed"):
            found[update["toolCallId"]] = update["content"][0]["content"]["text"]
    return found


async def open_session(wire: Wire, cwd: Path, servers: list[dict[str, Any]]) -> str:
    response = await wire.request("session/new", {"cwd": str(cwd), "mcpServers": servers})
    return str(result_of(response)["sessionId"])


async def prompt(wire: Wire, session_id: str, text: str) -> None:
    request = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    response = await wire.request("session/prompt", request, timeout=30)
    assert result_of(response) == {"stopReason": "end_turn"}


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie nobody reaped yet does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def gone(pids: list[int]) -> bool:
    with anyio.move_on_after(5):
        while any(alive(pid) for pid in pids):
            await anyio.sleep(0.05)
    return not any(alive(pid) for pid in pids)


async def test_servers_and_what_they_started_end_with_their_session(tmp_path: Path) -> None:
    spawn = call("call_spawn", "mcp__fixture__spawn")
    environment = call("call_env", "mcp__fixture__environment")
    server = Scripted(tmp_path, {"s1": [spawn, environment, {"text": "ok"}], "s2": [spawn, {"text": "ok"}]})
    own = [{"name": SECRET, "value": "passed on purpose"}, {"name": "FROM_THE_EDITOR", "value": "yes"}]
    with_secret = {SECRET: "sk-never-shown"}
    config = tmp_path / "cordis.yml"
    # A model row whose key lives in SECRET (never called: the scripted model serves the requests).
    config.write_text(
        f"- include: {(ROOT / 'cordis.record.yml').resolve()}\n"
        f"- id: keyed\n  name: acp_agent.llm.openai_compat\n  config: {{provider: unused, apiKeyEnv: {SECRET}}}\n",
        encoding="utf-8",
    )
    async with server.serve(config=config, env=with_secret) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        first = await open_session(wire, server.cwd, [fixture(env=own)])
        second = await open_session(wire, server.cwd, [fixture()])  # the same server: a connection of its own
        await prompt(wire, first, "Spawn, and show your environment.")
        await prompt(wire, second, "Spawn.")
        pids = {sid: [int(pid) for pid in results(wire, sid)["call_spawn"].split()] for sid in (first, second)}
        assert pids[first][0] != pids[second][0]
        assert all(alive(pid) for group in pids.values() for pid in group)
        names = results(wire, first)["call_env"].split()
        assert "FROM_THE_EDITOR" in names and "PATH" in names
        assert SECRET not in names  # the agent's credential, even when the editor names it
        result_of(await wire.request("session/close", {"sessionId": first}, timeout=30))
        assert not any(alive(pid) for pid in pids[first])  # gone before the close was answered
        assert all(alive(pid) for pid in pids[second])
    assert server.exit_code == 0
    assert await gone(pids[second])  # stdin EOF ended the other session's


async def test_timeouts_and_a_server_that_cannot_come_back(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    once = {"name": "once", "command": sys.executable, "args": [str(FIXTURE_SERVER), "once", str(marker)], "env": []}
    hang = {"name": "hang", "command": sys.executable, "args": [str(FIXTURE_SERVER), "hang"], "env": []}
    script = [
        {"toolCalls": [{"id": "call_slow", "name": "mcp__once__slow", "arguments": {"seconds": 30}}]},
        call("call_crash", "mcp__once__crash"),
        call("call_echo", "mcp__once__echo", {"message": "anyone?"}),
        {"text": "done"},
    ]
    server = Scripted(tmp_path, script)
    config = tmp_path / "cordis.yml"
    # The mcp row amended (its config replaced whole: the other limits keep their defaults).
    mcp = "{id: mcp, config: {startupTimeout: 3, callTimeout: 1}}"
    config.write_text(f"- include: {(ROOT / 'cordis.record.yml').resolve()}\n- {mcp}\n", encoding="utf-8")
    async with server.serve(config=config) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = await open_session(wire, server.cwd, [once, hang])
        await prompt(wire, session_id, "Wait, crash, echo.")
        said = results(wire, session_id)
    assert said["call_slow"] == "Error: " + texts.call_timed_out(1)
    assert said["call_crash"] == "Error: " + texts.not_connected("once", texts.exited(1))
    # The one reconnect the next call tries fails: the server now exits at start.
    came_back = texts.exited(3) + texts.stderr_tail(["fixture: cannot start, no database configured"])
    assert said["call_echo"] == "Error: " + texts.not_connected("once", came_back)
    statuses = [e["data"] for e in session_log(server.sessions, session_id) if e.get("type") == "mcp/status"]
    assert [(s["server"], s["state"]) for s in statuses] == [
        ("once", "ready"), ("hang", "failed"), ("once", "disconnected"), ("once", "failed"),
    ]  # fmt: skip
    assert statuses[1]["error"] == texts.timed_out("hang", 3) + texts.stderr_tail(["fixture: waiting for a database"])


GATE = """
import pathlib, sys, time
sessions = pathlib.Path(sys.argv[1])
# Fails only once the session's first model step is open (its log says so): the prompt came first.
while not any('"step/start"' in log.read_text() for log in sessions.glob("*/session.jsonl")):
    time.sleep(0.02)
print("gate: the database is down", file=sys.stderr, flush=True)
sys.exit(3)
"""


async def test_a_server_failing_after_the_first_prompt_came_is_told_in_its_answer(tmp_path: Path) -> None:
    """The usual editor flow, session/new then a prompt at once, by a client without notices: the
    first model call waits for the server, which fails then; the first answer begins with it."""
    server = Scripted(tmp_path, [{"text": "Hello."}])
    gate = {"name": "gate", "command": sys.executable, "args": ["-c", GATE, str(server.sessions)], "env": []}
    async with server.serve() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = await open_session(wire, server.cwd, [gate])
        await prompt(wire, session_id, "Hi.")
        answer = message_text(wire, session_id)
        result_of(await wire.request("session/close", {"sessionId": session_id}))
        before = len(wire.updates(session_id))
        loaded = {"sessionId": session_id, "cwd": str(server.cwd), "mcpServers": []}
        result_of(await wire.request("session/load", loaded))
        replayed = wire.updates(session_id)[before:]
    why = texts.exited(3) + texts.stderr_tail(["gate: the database is down"])
    assert answer == f"{texts.could_not_start('gate')}: {why}\n\nHello."
    log = session_log(server.sessions, session_id)
    kinds = [event["type"] for event in log]
    assert kinds.index("step/start") < kinds.index("mcp/status")  # it failed after the prompt's step opened
    assert [e for e in log if "could not start" in json.dumps(e)] == []  # the log (and so the model) never has it
    assert replayed and not any("could not start" in json.dumps(update) for update in replayed)


def git_repository(path: Path) -> Path:
    path.mkdir()
    for command in (
        ["init", "-q"],
        ["add", "notes.txt"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"],
    ):
        if command[0] == "add":
            (path / "notes.txt").write_text("draft\n", encoding="utf-8")
        subprocess.run(["git", *command], cwd=path, check=True)
    (path / "notes.txt").write_text("final\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def interop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One session with every interop server; one step calls a tool of each."""
    tmp_path = tmp_path_factory.mktemp("interop")
    repo = git_repository(tmp_path / "repo")
    servers = [
        {
            "name": "time",
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
            "env": [],
        },
        {
            "name": "git",
            "command": sys.executable,
            "args": ["-m", "mcp_server_git", "--repository", str(repo)],
            "env": [],
        },
    ]
    calls = [
        {"id": "call_time", "name": "mcp__time__get_current_time", "arguments": {"timezone": "Europe/Paris"}},
        {"id": "call_git", "name": "mcp__git__git_status", "arguments": {"repo_path": str(repo)}},
    ]
    if EVERYTHING.is_file():
        servers.append({"name": "everything", "command": str(EVERYTHING), "args": ["stdio"], "env": []})
        calls.append({"id": "call_everything", "name": "mcp__everything__echo", "arguments": {"message": "interop"}})
    server = Scripted(tmp_path, [{"toolCalls": calls}, {"text": "done"}])

    async def run() -> dict[str, str]:
        async with server.serve() as wire:
            await wire.request("initialize", {"protocolVersion": 1})
            session_id = await open_session(wire, server.cwd, servers)
            await prompt(wire, session_id, "Use every server.")
            return results(wire, session_id)

    return anyio.run(run)


def test_mcp_server_time(interop: dict[str, str]) -> None:
    answer = json.loads(interop["call_time"])
    assert answer["timezone"] == "Europe/Paris" and "datetime" in answer


def test_mcp_server_git_on_a_temporary_repository(interop: dict[str, str]) -> None:
    assert "notes.txt" in interop["call_git"] and "modified" in interop["call_git"]


def test_server_everything(interop: dict[str, str]) -> None:
    if not EVERYTHING.is_file():
        pytest.skip("@modelcontextprotocol/server-everything is not installed (.ci/run installs it when npm exists)")
    assert interop["call_everything"] == "Echo: interop"


async def test_a_kill_9_of_the_server_ends_its_mcp_servers_and_what_they_started(tmp_path: Path) -> None:
    """A stdio server is a process group of the server's registry: the watchdog ends it, and the
    sleep it started, when the server is killed without a chance to close it."""
    server = Scripted(tmp_path, {"s1": [call("call_spawn", "mcp__fixture__spawn"), {"text": "ok"}]})
    async with server.serve() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = await open_session(wire, server.cwd, [fixture()])
        await prompt(wire, session_id, "Spawn.")
        pids = [int(pid) for pid in results(wire, session_id)["call_spawn"].split()]
        assert all(alive(pid) for pid in pids)
        wire.process.kill()
    assert await gone(pids)


async def test_a_flood_of_output_is_bounded_on_the_card_and_in_the_log_and_stdout_noise_logged_once(
    tmp_path: Path,
) -> None:
    script = [
        call("call_flood", "mcp__fixture__flood", {"megabytes": 2}),
        call("call_noise", "mcp__fixture__noise", {"lines": 500}),
        {"text": "done"},
    ]
    server = Scripted(tmp_path, script)
    async with server.serve() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        hostile = {**fixture(), "args": [str(FIXTURE_SERVER), "hostile"]}
        session_id = await open_session(wire, server.cwd, [hostile])
        await prompt(wire, session_id, "Flood, then make noise.")
        said = results(wire, session_id)
    [flooded] = [
        u["update"] for u in wire.updates(session_id)
        if u["update"].get("toolCallId") == "call_flood" and u["update"].get("status") == "completed"
    ]  # fmt: skip
    [raw_text] = [block["text"] for block in flooded["rawOutput"]["content"]]
    assert raw_text == said["call_flood"]  # the card's rawOutput is cut as the model's copy is
    assert "bytes of output omitted" in raw_text and len(raw_text.encode()) < 31_000
    assert max(len(json.dumps(frame)) for frame in wire.received) < 100_000
    [log] = server.sessions.glob("*/session.jsonl")
    assert max(len(line) for line in log.read_bytes().splitlines()) < 100_000
    assert said["call_noise"] == "wrote 500 lines"
    stderr = wire.stderr_text
    assert stderr.count("MCP server fixture wrote a line that is not JSON-RPC on stdout") == 1
    assert "MCP server fixture: 500 lines of its stdout were not JSON-RPC (ignored)" in stderr
    assert "Failed to parse JSONRPC" not in stderr and "Traceback" not in stderr
