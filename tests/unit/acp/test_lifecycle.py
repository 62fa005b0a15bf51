"""Opening and closing one session id take turns, and a server keeps nothing of the ids it served."""

from __future__ import annotations

import gc
import itertools
import json
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
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
Answer = Callable[[str, dict[str, Any]], Awaitable[Any]]


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
        assert server.lifecycle.turns == {}  # nobody holds or waits for the id's lock: it is gone


@asynccontextmanager
async def prompting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[AcpServer, Answer]]:
    """A server of the record composition, initialized, whose model reads notes.txt and answers
    (each prompt once); and a function that sends a request and returns its result."""
    call = {"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}
    (tmp_path / "notes.txt").write_text("a note\n")
    (tmp_path / "script.json").write_text(json.dumps([{"toolCalls": [call]}, {"text": "It says: a note."}]))
    monkeypatch.setenv("ACP_AGENT_SCRIPT", str(tmp_path / "script.json"))
    monkeypatch.setenv("ACP_AGENT_SESSIONS", str(tmp_path / "sessions"))
    ctx = compose(packaged("cordis.record.yml"))
    async with ctx.running(), connected(METHODS) as peer:
        server = peer.conn.state = AcpServer(ctx, peer.conn)
        ids = itertools.count(1)

        async def answer(method: str, params: dict[str, Any]) -> Any:
            await peer.send(request(method, params, id := next(ids)))
            while not (answers := [frame for frame in peer.frames if frame.get("id") == id]):
                await peer.wait_frames(len(peer.frames) + 1)
            return answers[0]["result"]

        await answer("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        yield server, answer


def full_collections() -> int:
    return int(gc.get_stats()[-1]["collections"])


async def test_a_closed_session_is_freed_without_the_cyclic_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing a prompted session frees all of it by reference counting. Anything of it left in a
    reference cycle would keep the whole session (its events, its agent, its log's buffers) until a
    full collection, which a server with hundreds of sessions runs seldom (another session stays
    open here, so the close runs none)."""
    async with prompting(tmp_path, monkeypatch) as (server, answer):
        gc.collect()
        gc.disable()
        try:
            session_id = (await answer("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["sessionId"]
            prompt = [{"type": "text", "text": "read notes.txt"}]
            assert await answer("session/prompt", {"sessionId": session_id, "prompt": prompt}) == {
                "stopReason": "end_turn"
            }
            await answer("session/new", {"cwd": str(tmp_path), "mcpServers": []})  # stays open
            agent = server.wire.sessions[session_id].agent
            held = weakref.ref(agent), weakref.ref(agent.session)
            del agent
            collections = full_collections()
            assert await answer("session/close", {"sessionId": session_id}) == {}
            assert [ref() for ref in held] == [None, None]
            assert full_collections() == collections
        finally:
            gc.enable()


async def test_closing_the_last_open_session_runs_a_full_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the interpreter keeps for reuse of the closed sessions (its free lists) is let go once
    none is open, so that the allocator can give their memory back."""
    async with prompting(tmp_path, monkeypatch) as (_, answer):
        gc.disable()  # no collection but the server's own
        try:
            first, second = [
                (await answer("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["sessionId"] for _ in range(2)
            ]
            prompt = [{"type": "text", "text": "read notes.txt"}]
            assert await answer("session/prompt", {"sessionId": first, "prompt": prompt}) == {"stopReason": "end_turn"}
            collections = full_collections()
            assert await answer("session/close", {"sessionId": first}) == {}
            assert full_collections() == collections
            assert await answer("session/close", {"sessionId": second}) == {}
            assert full_collections() == collections + 1
        finally:
            gc.enable()
