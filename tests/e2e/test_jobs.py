"""Background jobs through the real server: a job outlives its turn, the next model call is told
when it ended, and the server's exit ends what still runs."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.snapshot.client_fs import RequestFailed
from acp_agent.snapshot.client_terminal import open_terminals
from tests.e2e.test_openai_compat import DUMMY_KEY, allow_once, composition, result_of
from tests.e2e.test_server import Scripted, session_log, text
from tests.e2e.wire import Frame, spawn_server
from tests.unit.llm.openai_server import DONE, Reply, answer, fake_openai, finish, stream, tool, tools
from tests.unit.tools.test_jobs import alive

pytestmark = pytest.mark.anyio


async def test_a_job_outlives_its_turn_is_announced_when_it_ends_and_ends_with_the_server(tmp_path: Path) -> None:
    ending = "echo $$ > b.pid; until [ -e go ]; do sleep 0.01; done; echo finished"
    calls: Any = [
        {
            "toolCalls": [
                {
                    "id": "call_a",
                    "name": "bash",
                    "arguments": {"command": "echo $$ > a.pid; exec sleep 60", "run_in_background": True},
                }
            ]
        },
        {"toolCalls": [{"id": "call_b", "name": "bash", "arguments": {"command": ending, "run_in_background": True}}]},
        {"text": "Both run."},
        {"text": "Noted."},
    ]
    server = Scripted(tmp_path, calls)
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        first = await wire.request(
            "session/prompt", {"sessionId": session_id, "prompt": [text("Start both.")]}, timeout=30
        )
        assert first["result"] == {"stopReason": "end_turn"}
        pid = int((server.cwd / "a.pid").read_text())
        (server.cwd / "go").touch()
        assert _job_lines(server, session_id) == []
        job_b = Path(f"/proc/{(server.cwd / 'b.pid').read_text().strip()}")
        with anyio.fail_after(10):
            while job_b.exists():  # gone once the server reaped it: its end is queued before the next prompt
                await anyio.sleep(0.01)
        second = await wire.request(
            "session/prompt", {"sessionId": session_id, "prompt": [text("And now?")]}, timeout=30
        )
        assert second["result"] == {"stopReason": "end_turn"}
        assert alive(pid)  # the job outlived both turns
    assert server.exit_code == 0
    assert not alive(pid)  # the server's exit ended it
    told = _job_lines(server, session_id)
    assert told == [
        f"[background job: job-2 exited with code 0: {ending}; job_output job-2 reads what it printed last]"
    ]


def _job_lines(server: Scripted, session_id: str) -> list[str]:
    return [
        e["data"]["content"][0]["text"]
        for e in session_log(server.sessions, session_id)
        if e.get("type") == "user/message" and e["data"]["source"]["kind"] == "job"
    ]


def call_reply(call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    return stream([tools(tool(0, json.dumps(arguments), id=call_id, name=name)), finish("tool_calls"), DONE])


async def test_a_dev_server_in_the_background_fetched_read_and_stopped(tmp_path: Path) -> None:
    """The use case, with the packaged composition and its real model adapter (a fake OpenAI
    server on loopback): start `python -m http.server` as a job, wait for it, fetch a page from it,
    read the job's log, stop it; nothing is left."""
    cwd, sessions = tmp_path / "work", tmp_path / "sessions"
    (cwd / "site").mkdir(parents=True)
    (cwd / "site" / "index.html").write_text("<html><body><h1>Dev page</h1><p>It works.</p></body></html>")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serve = f"echo $$ > job.pid; exec {sys.executable} -u -m http.server {port} --bind 127.0.0.1 --directory site"
    listening = (
        f"until {sys.executable} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))' "
        "2>/dev/null; do sleep 0.05; done"
    )
    replies = [
        call_reply("c1", "bash", {"command": serve, "run_in_background": True}),
        call_reply("c2", "bash", {"command": listening}),
        call_reply("c3", "web_fetch", {"url": f"http://127.0.0.1:{port}/index.html"}),
        call_reply("c4", "job_output", {"job_id": "job-1", "wait_seconds": 30}),
        call_reply("c5", "job_kill", {"job_id": "job-1"}),
        stream(answer("The page says: It works.")),
    ]
    async with fake_openai(*replies) as model:
        env = {"DEEPSEEK_API_KEY": DUMMY_KEY, "ACP_AGENT_SESSIONS": str(sessions)}
        async with spawn_server(config=composition(tmp_path, model.url), env=env) as wire:
            wire.answer = allow_once  # the packaged composition asks before bash and web_fetch run
            await wire.request("initialize", {"protocolVersion": 1})
            session_id = result_of(await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["sessionId"]
            answered = await wire.request(
                "session/prompt", {"sessionId": session_id, "prompt": [text("Serve it and check.")]}, timeout=60
            )
            pid = int((cwd / "job.pid").read_text())
            exit_code = await wire.finish()
    assert result_of(answered) == {"stopReason": "end_turn"} and exit_code == 0
    results = {
        e["data"]["callId"]: e["data"]["content"][0]["text"]
        for e in session_log(sessions, session_id)
        if e["type"] == "tool/result"
    }
    assert results["c1"].startswith("Started job-1 in the background; job-1 is running.")
    assert "# Dev page" in results["c3"] and "It works." in results["c3"]
    assert "GET /index.html" in results["c1"] + results["c4"]
    assert results["c5"].startswith("job-1 was killed.")
    # A client without terminals: the job's card shows the output read at its start (each later
    # read's card what that read).
    cards = {
        f["params"]["update"]["toolCallId"]: f["params"]["update"]["content"][0]["content"]["text"]
        for f in wire.received
        if f.get("method") == "session/update" and f["params"]["update"].get("status") == "completed"
    }
    assert results["c1"] in cards["c1"] and results["c4"] in cards["c4"]
    asked = [f["params"] for f in wire.received if f.get("method") == "session/request_permission"]
    fetch_options = [o["name"] for o in asked[2]["options"]]
    assert "Always allow fetching from 127.0.0.1" in fetch_options
    assert not alive(pid)
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass  # nobody listens any more


async def test_in_an_editor_with_terminals_a_job_runs_in_one_embedded_in_its_card(tmp_path: Path) -> None:
    """A client that advertises terminals runs the job (confined as any command: the sandbox's
    launcher, the session's TMPDIR, the process marker): its card embeds the terminal after the
    call ends, job_output reads it, the terminal is released when the job ends, and a job still
    running when the session closes is killed and its terminal released."""
    first = "echo tmp=$TMPDIR marker=${ACP_AGENT_PROCESS:+set}; until [ -e go ]; do sleep 0.01; done; exit 3"
    second = "echo $$ > second.pid; exec sleep 60"
    calls: Any = [
        {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": first, "run_in_background": True}}]},
        {"toolCalls": [{"id": "c2", "name": "bash", "arguments": {"command": "touch go"}}]},
        # Two reads: the first may bring the first output (when the start did not), the second the end.
        {"toolCalls": [{"id": "c3", "name": "job_output", "arguments": {"job_id": "job-1", "wait_seconds": 30}}]},
        {"toolCalls": [{"id": "c4", "name": "job_output", "arguments": {"job_id": "job-1", "wait_seconds": 30}}]},
        {"toolCalls": [{"id": "c5", "name": "bash", "arguments": {"command": second, "run_in_background": True}}]},
        {"text": "One ended, one runs."},
    ]
    server = Scripted(tmp_path, calls)
    async with open_terminals(server.cwd) as terminals, anyio.create_task_group() as waits:

        async def answer_terminal(request: Frame) -> None:
            try:
                reply: Frame = {"result": await terminals.handle(request["method"], request["params"])}
            except RequestFailed as exc:
                reply = {"error": {"code": exc.code, "message": exc.message}}
            await wire.send({"jsonrpc": "2.0", "id": request["id"], **reply})

        async def answer(request: Frame) -> Frame | None:
            assert str(request["method"]).startswith("terminal/"), request
            waits.start_soon(answer_terminal, request)  # a wait for an exit answers when it comes
            return None

        async with server.serve() as wire:
            wire.answer = answer
            await wire.request("initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": True}})
            created = await wire.request("session/new", {"cwd": str(server.cwd), "mcpServers": []})
            session_id = result_of(created)["sessionId"]
            answered = await wire.request(
                "session/prompt", {"sessionId": session_id, "prompt": [text("Run them.")]}, timeout=60
            )
            assert result_of(answered) == {"stopReason": "end_turn"}
            pid = int((server.cwd / "second.pid").read_text())
            assert alive(pid)
            assert result_of(await wire.request("session/close", {"sessionId": session_id})) == {}
            with anyio.fail_after(10):
                while terminals.terminals:  # the close kills and releases the second job's terminal
                    await anyio.sleep(0.01)
            assert not alive(pid)
        waits.cancel_scope.cancel()
    requests = [f for f in wire.received if str(f.get("method", "")).startswith("terminal/")]
    creates = [f["params"] for f in requests if f["method"] == "terminal/create"]
    assert [c["args"][-3:] for c in creates] == [
        ["bash", "-c", first],
        ["bash", "-c", "touch go"],
        ["bash", "-c", second],
    ]
    assert creates[0]["command"] != "bash"  # behind the sandbox's launcher, as a foreground command
    env = {variable["name"]: variable["value"] for variable in creates[0]["env"]}
    assert "ACP_AGENT_PROCESS" in env and env["TMPDIR"] == creates[1]["env"][-1]["value"]
    updates = [
        f["params"]["update"]
        for f in wire.received
        if f.get("method") == "session/update" and f["params"]["update"].get("toolCallId") == "c1"
    ]
    ended = [u for u in updates if u.get("status") == "completed"]
    assert len(ended) == 1 and ended[0]["content"][-1]["type"] == "terminal"  # kept after the call's end
    results = {
        e["data"]["callId"]: e["data"]["content"][0]["text"]
        for e in session_log(server.sessions, session_id)
        if e["type"] == "tool/result"
    }
    assert results["c1"].startswith("Started job-1 in the background; job-1 is running.\n")
    assert results["c4"].startswith("job-1 exited with code 3.\n")
    printed = "".join(results[c].partition("\n")[2].replace("(no new output)", "") for c in ("c1", "c3", "c4"))
    assert printed == f"tmp={env['TMPDIR']} marker=set\n"
