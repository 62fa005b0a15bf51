"""Opening and closing one session id take turns, and a server keeps nothing of the ids it served."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonrpcserver.exceptions import JsonRpcError

from acp_agent.acp.schema import CloseSessionParams, LoadSessionParams, NewSessionParams
from acp_agent.acp.server import METHODS, AcpServer
from acp_agent.cli import packaged
from acp_agent.kernel import compose

from .test_connection import request
from .test_connection import serving as connected
from .test_modes import serving

pytestmark = pytest.mark.anyio


async def test_loads_and_closes_of_one_session_take_turns_and_leave_no_lock_behind(tmp_path: Path) -> None:
    async with serving(tmp_path, permissions=False) as (server, _):
        session_id = (await server.new_session(NewSessionParams(cwd=str(tmp_path), mcp_servers=[]))).session_id
        unknown: list[int] = []

        async def load() -> None:
            await server.load_session(LoadSessionParams(session_id=session_id, cwd=str(tmp_path), mcp_servers=[]))

        async def close() -> None:
            try:
                await server.close_session(CloseSessionParams(session_id=session_id))
            except JsonRpcError as exc:  # closed already by the other close
                unknown.append(exc.code)

        async with anyio.create_task_group() as tg:
            for step in (load, close, load, close, close):
                tg.start_soon(step)
        assert session_id not in server.wire.sessions and unknown == [-32002]
        assert server._lifecycle == {}  # nobody holds or waits for the id's lock: it is gone


async def test_a_closed_session_is_freed_without_the_cyclic_collector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing a prompted session frees all of it by reference counting. Anything of it left in a
    reference cycle would keep the whole session (its events, its agent, its log's buffers) until a
    full collection, which a server with hundreds of sessions runs seldom."""
    call = {"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}
    (tmp_path / "notes.txt").write_text("a note\n")
    (tmp_path / "script.json").write_text(json.dumps([{"toolCalls": [call]}, {"text": "It says: a note."}]))
    monkeypatch.setenv("ACP_AGENT_SCRIPT", str(tmp_path / "script.json"))
    monkeypatch.setenv("ACP_AGENT_SESSIONS", str(tmp_path / "sessions"))
    ctx = compose(packaged("cordis.record.yml"))
    async with ctx.running(), connected(METHODS) as peer:
        server = peer.conn.state = AcpServer(ctx, peer.conn)

        async def answer(id: int, method: str, params: dict[str, Any]) -> Any:
            await peer.send(request(method, params, id))
            while not (answers := [frame for frame in peer.frames if frame.get("id") == id]):
                await peer.wait_frames(len(peer.frames) + 1)
            return answers[0]["result"]

        await answer(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        gc.collect()
        gc.disable()
        try:
            session_id = (await answer(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))["sessionId"]
            prompt = [{"type": "text", "text": "read notes.txt"}]
            assert await answer(3, "session/prompt", {"sessionId": session_id, "prompt": prompt}) == {"stopReason": "end_turn"}
            agent = server.wire.sessions[session_id].agent
            held = weakref.ref(agent), weakref.ref(agent.session)
            del agent
            assert await answer(4, "session/close", {"sessionId": session_id}) == {}
            assert [ref() for ref in held] == [None, None]
        finally:
            gc.enable()
