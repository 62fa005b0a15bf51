"""`AgentFactory.restore(loaded)`: an agent that continues a stored session, and the routes of
top-level sessions when loaded ones hold some."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from acp_agent.agent.keys import AGENTS
from acp_agent.kernel import Context
from acp_agent.session import LoadedSession, SessionHeader, TextContent
from acp_agent.session.persistence import SESSIONS
from tests.unit.agent.conftest import spied

pytestmark = pytest.mark.anyio


def text(value: str) -> list[TextContent]:
    return [TextContent(text=value)]


async def test_a_loaded_session_keeps_its_header_and_continues_its_conversation(tmp_path: Path) -> None:
    ctx, requests = spied(tmp_path, {"s1": [{"text": "one"}], "s7": [{"text": "two"}]})
    async with ctx.running():
        first = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await first.followup(text("remember PELICAN")).wait()
        await first.dispose()
        loaded = ctx.get(SESSIONS).load(first.id)
        header = loaded.header.model_copy(update={"route": "s7", "created_at": 42})
        restored = loaded._replace(header=header)  # the file is rewritten under the new header
        again = await ctx.get(AGENTS).restore(restored)
        assert (again.id, again.route, again.session.header) == (first.id, "s7", header)
        assert (await again.followup(text("what was it?")).wait()).kind == "completed"
        await again.dispose()
        stored = ctx.get(SESSIONS).load(first.id)
    assert [m.role for m in requests[1].messages] == ["user", "assistant", "user"]
    assert requests[1].messages[0].content[0].text == "remember PELICAN"
    assert requests[1].route == "s7"
    assert stored.header == header
    assert [e.data.turn for e in stored.events if e.type == "turn/end"] == [1, 2]


async def test_a_loaded_session_on_a_taken_or_missing_route_gets_the_next_free_one(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([])
    async with ctx.running():
        live = await ctx.get(AGENTS).create(cwd=str(tmp_path))  # s1
        taken = LoadedSession(SessionHeader(id="a", created_at=1, cwd="/w", route="s1"), [], False)
        missing = LoadedSession(SessionHeader(id="b", created_at=1, cwd="/w"), [], False)
        kept = LoadedSession(SessionHeader(id="c", created_at=1, cwd="/w", route="s4"), [], False)
        routes = [(await ctx.get(AGENTS).restore(one)).route for one in (taken, missing, kept)]
        newer = await ctx.get(AGENTS).create(cwd=str(tmp_path))  # s4 is held: the next new one skips it
        stored = [ctx.get(SESSIONS).load(i).header.route for i in "abc"]
    assert (live.route, routes, newer.route) == ("s1", ["s2", "s3", "s4"], "s5")
    assert stored == routes  # written into the headers


async def test_a_process_with_a_route_base_names_its_top_level_routes_under_it(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    """Run as another's ACP child, this server's sessions are routed under that child agent's."""
    ctx = scripted([])
    async with ctx.running():
        factory = ctx.get(AGENTS)
        factory.route_base = "s1/call_a"
        first = await factory.create(cwd=str(tmp_path))
        second = await factory.create(cwd=str(tmp_path))
    assert (first.route, second.route) == ("s1/call_a/s1", "s1/call_a/s2")
