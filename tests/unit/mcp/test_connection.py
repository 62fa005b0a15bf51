"""`Connection` to a stdio server whose command cannot start: the failure is reported at once."""

from __future__ import annotations

import anyio
import pytest

from acp_agent.mcp import connection
from acp_agent.mcp.connection import Connection
from acp_agent.mcp.limits import Limits
from acp_agent.mcp.servers import StdioServer

pytestmark = pytest.mark.anyio


async def test_a_command_that_cannot_start_fails_without_waiting_for_its_stderr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing holds the stderr pipe of a server that never started: its end is read at once, not
    after the drain's bound (a minute here; one second in use, added to the first prompt)."""
    monkeypatch.setattr(connection, "STDERR_DRAIN_SECONDS", 60)
    changes: list[str] = []
    server = Connection(
        StdioServer(name="typo", command="/nonexistent/mcp-server"), Limits(), lambda c: changes.append(c.state)
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            await server.wait_settled()
            server.close()
    assert changes[:2] == ["connecting", "failed"]
    assert server.error is not None and "/nonexistent/mcp-server" in server.error
