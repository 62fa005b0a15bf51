"""Opening and closing one session id take turns, and a server keeps nothing of the ids it served."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from jsonrpcserver.exceptions import JsonRpcError

from acp_agent.acp.schema import CloseSessionParams, LoadSessionParams, NewSessionParams

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
