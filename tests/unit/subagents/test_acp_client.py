"""`AcpChild`, the client side of an ACP agent run as a child process, against a small fake agent
(`fixtures/acp/fake_agent.py`): answers, errors, the child's own requests, broken frames, and the
ways it ends."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from acp_agent.agent.keys import AGENTS
from acp_agent.kernel import Context
from acp_agent.mcp.servers import HttpServer, StdioServer
from acp_agent.mcp.session import MCP
from acp_agent.sandbox.service import SANDBOX, Sandbox
from acp_agent.session.events import TurnAborted, TurnCompleted, TurnFailed, TurnMaxSteps, TurnMaxTokens
from acp_agent.subagents import acp_client, texts
from acp_agent.subagents.acp import AcpUpdateEvent, StandIn, _ending, _mcp_servers
from acp_agent.subagents.acp_client import AcpChild, AcpChildError, Handlers
from acp_agent.subagents.acp_files import READ, WRITE, serve_fs
from acp_agent.tools.scratch import scratch_dir
from tests.paths import FIXTURES
from tests.unit.tools.helpers import call_context, logged_call

pytestmark = pytest.mark.anyio

FAKE = FIXTURES / "acp" / "fake_agent.py"


async def started(mode: str, tmp_path: Path) -> AcpChild:
    return await AcpChild.start(mode, [sys.executable, str(FAKE), mode], cwd=tmp_path, env={}, group=None)


async def test_a_prompt_answers_the_childs_requests_and_collects_its_updates(tmp_path: Path) -> None:
    child = await started("tired", tmp_path)
    updates: list[dict[str, Any]] = []
    asked: list[dict[str, Any]] = []

    async def ask(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    servers = [
        {"name": "local", "command": "x", "args": [], "env": []},
        {"type": "http", "name": "web", "url": "u", "headers": []},
    ]
    try:
        session_id = await child.handshake(10, tmp_path, servers)
        reason = await child.prompt(session_id, "Go.", Handlers(updates.append, ask, acp_client.not_served))
    finally:
        await child.close()
    assert session_id == "child-1:local"  # http is not among its mcpCapabilities: not handed on
    assert reason == "max_tokens"
    assert asked == [{"options": []}]
    # fs/* is not advertised: method not found; the permission answer is the user's.
    assert updates == [
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {
                "type": "text",
                "text": '-32601 {"outcome": {"outcome": "selected", "optionId": "allow_once"}}',
            },
        }
    ]
    await child.close()  # once is enough


async def test_a_refused_permission_request_is_answered_cancelled_and_a_strange_stop_reason_is_end_turn(
    tmp_path: Path,
) -> None:
    child = await started("plain", tmp_path)
    said: list[dict[str, Any]] = []
    try:
        session_id = await child.handshake(10, tmp_path, [])
        reason = await child.prompt(session_id, "Go.", Handlers(said.append, acp_client._refuse, acp_client.not_served))
    finally:
        await child.close()
    assert reason == "end_turn"
    assert said[0]["content"]["text"].endswith('{"outcome": {"outcome": "cancelled"}}')


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("refuse", texts.acp_error("refuse", "no entry")),
        ("nameless", texts.acp_garbage("nameless", '{"sessions": []}')),
    ],
)
async def test_a_handshake_that_goes_wrong_says_how(tmp_path: Path, mode: str, message: str) -> None:
    child = await started(mode, tmp_path)
    try:
        with pytest.raises(AcpChildError) as caught:
            await child.handshake(10, tmp_path, [])
    finally:
        await child.close()
    assert str(caught.value) == message


async def test_additional_roots_go_to_a_child_that_advertises_them_and_only_to_it(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    for mode, expected in (("roots", f"child-1::{lib}"), ("plain", "child-1:")):
        child = await started(mode, tmp_path)
        try:
            assert await child.handshake(10, tmp_path, [], [lib]) == expected
        finally:
            await child.close()


async def test_garbage_mid_prompt_fails_it_and_every_later_call(tmp_path: Path) -> None:
    child = await started("garbage-later", tmp_path)
    session_id = await child.handshake(10, tmp_path, [])
    handlers = Handlers(lambda update: None, acp_client._refuse, acp_client.not_served)
    with pytest.raises(AcpChildError) as caught:
        await child.prompt(session_id, "Go.", handlers)
    assert str(caught.value) == texts.acp_garbage("garbage-later", '{"not": "json-rpc"}')
    with pytest.raises(AcpChildError) as again:
        await child.prompt(session_id, "Again.", handlers)
    assert str(again.value) == str(caught.value)


async def test_a_command_that_does_not_exist_is_not_started(tmp_path: Path) -> None:
    with pytest.raises(AcpChildError) as caught:
        await AcpChild.start("nothing", [str(tmp_path / "nothing")], cwd=tmp_path, env={}, group=None)
    assert str(caught.value).startswith("the ACP agent 'nothing' could not be started: ")


async def test_a_child_that_ignores_eof_and_sigterm_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(acp_client, "EOF_GRACE", 0.2)
    monkeypatch.setattr(acp_client, "TERM_GRACE", 0.2)
    child = await started("stubborn", tmp_path)
    with anyio.fail_after(10):
        await child.close()
    assert child._process.returncode == -9
    child.kill()  # reaped: its group's number is not signalled again


async def test_a_child_whose_owner_went_is_killed_at_once(tmp_path: Path) -> None:
    child = await started("stubborn", tmp_path)
    child.kill()
    with anyio.fail_after(10):
        assert await child._process.wait() == -9
    await child.close()  # reaps it


async def test_a_child_that_exited_fails_the_write(tmp_path: Path) -> None:
    child = await AcpChild.start("gone", [sys.executable, "-c", "pass"], cwd=tmp_path, env={}, group=None)
    await child._process.wait()
    with pytest.raises(AcpChildError) as caught:
        for _ in range(100):  # the pipe may take a write or two before it reports the reader gone
            await child.request("initialize", {"padding": "x" * 65536})
    assert str(caught.value) in (texts.acp_exited("gone", 0), texts.acp_exited("gone", None))


def test_stop_reasons_are_turn_endings() -> None:
    assert _ending("end_turn") == TurnCompleted()
    assert _ending("max_tokens") == TurnMaxTokens()
    assert _ending("max_turn_requests") == TurnMaxSteps()
    assert _ending("refusal") == TurnFailed(message="the ACP agent refused the request", code="refusal")
    assert _ending("cancelled") == TurnAborted(reason="the ACP agent cancelled its turn")


async def test_an_acp_childs_file_access_stays_inside_the_cwd(tmp_path: Path) -> None:
    agent = call_context(cwd=tmp_path).agent
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    assert await serve_fs(agent, READ, {"path": "a.txt"}) == {"content": "one\ntwo\nthree\n"}
    assert await serve_fs(agent, READ, {"path": str(tmp_path / "a.txt"), "line": 2, "limit": 1}) == {"content": "two\n"}
    assert await serve_fs(agent, READ, {"path": "a.txt", "line": 3}) == {"content": "three\n"}
    assert await serve_fs(agent, WRITE, {"path": "new/b.txt", "content": "made"}) is None
    assert (tmp_path / "new" / "b.txt").read_text() == "made"
    refusals = [
        (READ, {"path": "missing.txt"}, -32002),
        (READ, {"path": "../outside.txt"}, -32603),
        (WRITE, {"path": "/etc/passwd", "content": "x"}, -32603),
        ("terminal/create", {"command": "ls"}, -32601),
    ]
    for method, params, code in refusals:
        with pytest.raises(acp_client.Refused) as caught:
            await serve_fs(agent, method, params)
        assert caught.value.code == code
    assert not (tmp_path.parent / "outside.txt").exists()


async def test_an_acp_childs_writes_reach_the_roots_the_file_tools_may_write_and_no_other(tmp_path: Path) -> None:
    """One rule of where may be written: `tools.sandboxing.writable_roots`, as for `write_file`."""
    (tmp_path / "work").mkdir()
    extra, outside = tmp_path / "cache", tmp_path / "outside"
    extra.mkdir()
    outside.mkdir()
    call = logged_call(tmp_path / "work")
    call.ctx.provide(SANDBOX, Sandbox("landlock", extra_writable=[str(extra)]))
    agent = call.agent
    assert await serve_fs(agent, WRITE, {"path": f"{extra}/notes.txt", "content": "a\n"}) is None
    assert await serve_fs(agent, READ, {"path": f"{extra}/notes.txt"}) == {"content": "a\n"}
    scratch = scratch_dir(call)
    assert await serve_fs(agent, WRITE, {"path": f"{scratch}/t", "content": "t"}) is None
    assert (scratch / "t").read_text() == "t"
    for path in (f"{outside}/x", "../cache/y"):  # outside every root; a relative path stays in the cwd
        with pytest.raises(acp_client.Refused) as caught:
            await serve_fs(agent, WRITE, {"path": path, "content": "x"})
        assert caught.value.code == -32603
    assert not (outside / "x").exists() and not (extra / "y").exists()
    with pytest.raises(acp_client.Refused) as caught:  # a closed session's scratch directory
        await serve_fs(agent, READ, {"path": f"{tempfile.gettempdir()}/acp-agent-gone-{tmp_path.name}/x"})
    assert caught.value.code == -32002


async def test_a_turn_whose_child_said_no_text_ends_without_an_answer(tmp_path: Path) -> None:
    """The stand-in logs every update; only text chunks make the turn's answer (none: no step)."""
    call = logged_call(tmp_path, AcpUpdateEvent)
    image = {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "", "mimeType": "image/png"}}

    class Child:
        async def prompt(self, session_id: str, text: str, handlers: Handlers) -> str:
            assert (session_id, text) == ("child-1", "")  # the turn's last event is no user message
            handlers.updates(image)
            return "end_turn"

    ending = await StandIn(Child(), "child-1").turn(call.agent, 1)  # type: ignore[arg-type]
    assert ending == TurnCompleted()
    assert [(e.type, e.data.update) for e in call.session.events[1:]] == [("acp/update", image)]


def test_the_child_gets_the_mcp_servers_of_the_threads_top_level_session() -> None:
    """`session/new` names them as the editor gave them (`mcpServers` of the thread's session)."""
    child = call_context().agent
    top = call_context("call_2").agent
    spec = StdioServer(name="fixture", command="python", args=["server.py"], env=[])
    web = HttpServer(type="http", name="web", url="http://127.0.0.1:9/mcp", headers=[])

    class Service:
        def of(self, agent: object) -> object:
            return SimpleNamespace(specs=[spec, web]) if agent is top else None

    class Agents:
        def top_level(self, agent: object) -> object:
            return top

    ctx = Context()
    child.ctx = ctx
    assert _mcp_servers(child) == []  # no MCP row
    ctx.provide(AGENTS, Agents())  # type: ignore[arg-type]
    ctx.provide(MCP, Service())  # type: ignore[arg-type]
    assert _mcp_servers(child) == [
        {"name": "fixture", "command": "python", "args": ["server.py"], "env": []},
        {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []},
    ]
