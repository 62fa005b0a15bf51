"""`Connection` to the fixture's stdio server: each phase and move, what the session hears at
each, and the closes that could hang (before `serve` ran, while connecting)."""

from __future__ import annotations

import sys

import anyio
import pytest

from acp_agent.kernel.states import TransitionError
from acp_agent.mcp import connection
from acp_agent.mcp.connection import TRANSITIONS, Connection, Phase
from acp_agent.mcp.limits import Limits
from acp_agent.mcp.servers import ServerSpec, StdioServer
from tests.paths import ROOT
from tests.unit.kernel.test_states import reachable
from tests.unit.tools.helpers import call_context

pytestmark = pytest.mark.anyio

SERVER = str(ROOT / "fixtures" / "mcp" / "server.py")


class Recorded(Connection):
    """A connection that keeps each phase it entered and each state it reported."""

    def __init__(self, spec: ServerSpec, limits: Limits | None = None) -> None:
        self.phases: list[Phase] = []
        self.reports: list[str] = []
        super().__init__(spec, limits or Limits(), lambda c: self.reports.append(c.state))

    def _enter(self, phase: Phase) -> None:
        super()._enter(phase)
        self.phases.append(phase)


def fixture(*args: str, name: str = "fixture") -> StdioServer:
    return StdioServer(name=name, command=sys.executable, args=[SERVER, *args])


async def text_of(server: Connection, tool: str, **arguments: object) -> str:
    result = await server.call(tool, dict(arguments), call_context(), server.limits)
    return result.plain_text()


def test_every_phase_leads_to_closed_and_closing_is_reached_from_every_open_phase() -> None:
    assert [phase for phase in Phase if not TRANSITIONS.after(phase)] == [Phase.CLOSED]
    assert reachable(TRANSITIONS, Phase.CONNECTING) == set(Phase)
    open_phases = set(Phase) - {Phase.CLOSING, Phase.CLOSED}
    assert all(Phase.CLOSING in TRANSITIONS.after(phase) for phase in open_phases)


async def test_ready_relisting_ending_disconnected_connecting_again_and_closed() -> None:
    server = Recorded(fixture())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            await server.wait_settled()
            assert server.phase is Phase.READY and "extra" not in [t.tool for t in server.tools]
            assert await text_of(server, "grow") == "grown"  # returns once the new list is in
            assert server.phase is Phase.READY and "extra" in [t.tool for t in server.tools]
            assert (await text_of(server, "crash")).startswith("Error: MCP server fixture is not connected")
            assert server.phase is Phase.DISCONNECTED
            assert await text_of(server, "echo", message="back") == "echo: back"  # connected again first
            server.close()
            server.close()  # once is enough
    assert server.phases == [
        Phase.READY,
        Phase.RELISTING, Phase.READY,  # the tools the server said changed, listed again
        Phase.ENDING, Phase.DISCONNECTED,  # it died mid-call
        Phase.CONNECTING, Phase.READY,  # the next call connected it again
        Phase.ENDING, Phase.CLOSING, Phase.CLOSED,
    ]  # fmt: skip
    assert server.reports == ["connecting", "ready", "ready", "disconnected", "connecting", "ready", "closed"]


async def test_a_command_that_cannot_start_fails_and_each_call_tries_it_once_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing holds the stderr pipe of a server that never started: its end is read at once, not
    after the drain's bound (a minute here; one second in use, added to the first prompt)."""
    monkeypatch.setattr(connection, "STDERR_DRAIN_SECONDS", 60)
    server = Recorded(StdioServer(name="typo", command="/nonexistent/mcp-server"))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            await server.wait_settled()
            assert server.phase is Phase.FAILED
            assert server.error is not None and "/nonexistent/mcp-server" in server.error
            assert (await text_of(server, "echo", message="x")).startswith("Error: MCP server typo is not connected")
            server.close()
    assert server.phases == [Phase.FAILED, Phase.CONNECTING, Phase.FAILED, Phase.CLOSING, Phase.CLOSED]
    assert server.reports == ["connecting", "failed", "connecting", "failed", "closed"]


async def test_a_server_that_exits_while_connecting_fails_with_its_exit() -> None:
    server = Recorded(fixture("exit"))
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            await server.wait_settled()
            server.close()
    assert server.phases == [Phase.FAILED, Phase.CLOSING, Phase.CLOSED]
    assert server.error is not None and server.error.startswith("the server exited with code 3")


async def test_closed_before_serve_ran_it_starts_nothing() -> None:
    server = Recorded(fixture())
    server.close()
    with anyio.fail_after(5):
        await server.serve()
    assert server.phases == [Phase.CLOSING, Phase.CLOSED]
    assert server.reports == ["closed"] and server.pgid is None


async def test_closed_while_connecting_it_ends_with_the_attempt_and_nothing_waits_for_it() -> None:
    server = Recorded(fixture("hang"), Limits(startup_timeout=0.5))
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            while server.pgid is None:  # the server runs, and never answers
                await anyio.sleep(0.01)
            server.close()
            await server.wait_settled()  # closing: nothing to wait for
            assert server.phase is Phase.CLOSING
            assert (await text_of(server, "echo", message="x")).startswith("Error: MCP server fixture is not connected")
    assert server.phases == [Phase.CLOSING, Phase.CLOSED]
    assert server.reports == ["connecting", "closed"]


async def test_a_move_the_table_does_not_list_is_refused() -> None:
    server = Recorded(fixture())
    server.close()
    await server.serve()
    with pytest.raises(TransitionError, match="no move from closed to connecting"):
        server._enter(Phase.CONNECTING)
    assert server.phase is Phase.CLOSED


async def test_closed_while_connecting_to_a_server_that_answers_it_is_never_reported_ready() -> None:
    server = Recorded(fixture())
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            while server.pgid is None:  # started, not initialized yet
                await anyio.sleep(0.01)
            server.close()
    assert server.phases == [Phase.CLOSING, Phase.CLOSED]
    assert server.reports == ["connecting", "closed"]


async def test_changes_announced_while_the_tools_are_listed_again_end_in_one_ready_list() -> None:
    server = Recorded(fixture())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve)
            await server.wait_settled()
            async with anyio.create_task_group() as calls:  # two announcements, however they interleave
                for _ in range(2):
                    calls.start_soon(text_of, server, "grow")
            await server.wait_settled()
            assert server.phase is Phase.READY and "extra" in [t.tool for t in server.tools]
            assert server.phases[:2] == [Phase.READY, Phase.RELISTING] and Phase.ENDING not in server.phases
            server.close()
