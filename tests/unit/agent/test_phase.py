"""The agent's phases (new, idle, running, stopped, stopping, disposed): each move, the moves that
are refused, and the disposals that could hang (before the loop ran, twice at once, while a turn
waits for its release, with messages queued before the start)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from acp_agent.agent.agent import DISPOSING, TRANSITIONS, Agent, Phase, Ticket
from acp_agent.agent.keys import AGENTS
from acp_agent.kernel import Context
from acp_agent.kernel.states import TransitionError
from acp_agent.session.events import SessionHeader
from acp_agent.session.log import Session
from acp_agent.session.persistence import SESSIONS
from tests.unit.agent.test_loop import first, kinds, loops, text
from tests.unit.kernel.test_states import reachable

pytestmark = pytest.mark.anyio


async def in_a_hanging_turn(ctx: Context, tmp_path: Path) -> tuple[Agent, Ticket]:
    """A new agent whose turn streams, then waits for ever (the script's `hang`)."""
    agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
    ticket = agent.followup(text("hang"))
    await first(agent, "assistant/chunk")
    return agent, ticket


def test_every_phase_but_disposed_has_a_way_out_and_disposed_is_reached_from_every_phase() -> None:
    assert [phase for phase in Phase if not TRANSITIONS.after(phase)] == [Phase.DISPOSED]
    assert reachable(TRANSITIONS, Phase.NEW) == set(Phase)
    open_phases = (Phase.NEW, Phase.IDLE, Phase.RUNNING, Phase.STOPPED)
    assert all(Phase.STOPPING in TRANSITIONS.after(phase) for phase in open_phases)


async def test_new_idle_running_idle_and_a_second_start_is_refused(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"text": "one"}, {"text": "two"}])
    seen: list[Phase] = []

    def setup(agent: Agent) -> None:
        seen.append(agent.phase)
        agent.followup(text("queued while new"))  # runs once the agent is started
        seen.append(agent.phase)

    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path), setup=setup)
        assert seen == [Phase.NEW, Phase.NEW]
        assert agent.phase is Phase.RUNNING  # started with a message queued: its loop is on its way
        await agent.when_idle()
        assert agent.phase is Phase.IDLE and not loops(agent)
        ticket = agent.followup(text("again"))
        assert agent.phase is Phase.RUNNING
        assert (await ticket.wait()).kind == "completed"
        await agent.when_idle()
        assert agent.phase is Phase.IDLE
        with pytest.raises(TransitionError, match="no move from idle to idle"):
            agent.start()
        assert agent.phase is Phase.IDLE
    assert agent.phase is Phase.DISPOSED  # the shutdown disposed it


async def test_disposing_an_idle_agent(scripted: Callable[..., Context], tmp_path: Path) -> None:
    ctx = scripted([])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert agent.phase is Phase.IDLE
        with anyio.fail_after(5):
            await agent.dispose()
            await agent.dispose()
        assert agent.phase is Phase.DISPOSED and agent.scope.disposed
        assert (await agent.followup(text("late")).wait()).kind == "disposed"
        with pytest.raises(TransitionError, match="no move from disposed to idle"):
            agent.start()


async def test_disposing_a_new_agent_settles_what_was_queued_and_wakes_who_waits_for_idle(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([])
    async with ctx.running():
        header = SessionHeader(id="never-started", created_at=0, cwd=str(tmp_path))
        session = Session(header, registry=ctx.get(SESSIONS).registry)
        agent = Agent(ctx, session, ctx.get(AGENTS).defaults, ctx.scope.child(), "s9")
        ticket = agent.followup(text("queued"))
        assert agent.phase is Phase.NEW and agent.busy
        idle = anyio.Event()

        async def wait_idle() -> None:
            await agent.when_idle()
            idle.set()

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(wait_idle)
                await anyio.wait_all_tasks_blocked()
                await agent.dispose()
            assert (await ticket.wait()).kind == "disposed"
        assert idle.is_set() and agent.phase is Phase.DISPOSED and not agent.busy
        assert kinds(agent) == []  # never run, never logged


async def test_disposing_a_running_agent_passes_through_stopping(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"hang": True}])
    during: list[tuple[Phase, str]] = []

    async def disposing(agent: Agent) -> None:
        late = agent.followup(text("during the disposal"))
        during.append((agent.phase, (await late.wait()).kind))

    ctx.events.on(DISPOSING, disposing)
    async with ctx.running():
        agent, ticket = await in_a_hanging_turn(ctx, tmp_path)
        assert agent.phase is Phase.RUNNING
        with anyio.fail_after(5):
            await agent.dispose()
        assert during == [(Phase.STOPPING, "disposed")]
        assert agent.phase is Phase.DISPOSED and not loops(agent)
        assert (await ticket.wait()).kind == "disposed"


async def test_disposed_before_its_loop_ran(scripted: Callable[..., Context], tmp_path: Path) -> None:
    """The loop task is started, not yet run, when the dispose comes: it stops as it starts."""
    ctx = scripted([{"text": "never asked"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ticket = agent.followup(text("x"))
        assert agent.phase is Phase.RUNNING and loops(agent)
        with anyio.fail_after(5):
            await agent.dispose()
            assert (await ticket.wait()).kind == "disposed"
        assert agent.phase is Phase.DISPOSED and not loops(agent)
        assert "assistant/message" not in kinds(agent)


async def test_two_disposals_at_once_both_return_once_the_loop_has_stopped(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"hang": True}])
    async with ctx.running():
        agent, _ = await in_a_hanging_turn(ctx, tmp_path)
        returned: list[tuple[Phase, list[str]]] = []

        async def dispose() -> None:
            await agent.dispose()
            returned.append((agent.phase, loops(agent)))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(dispose)
                tasks.start_soon(dispose)
        assert [loop for _, loop in returned] == [[], []]
        assert agent.phase is Phase.DISPOSED


async def test_disposing_while_a_turn_waits_for_its_release(scripted: Callable[..., Context], tmp_path: Path) -> None:
    ctx = scripted([{"text": "one"}, {"text": "two"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        held = agent.followup(text("a"), hold=True)
        after = agent.followup(text("b"))
        assert (await held.wait()).kind == "completed"  # never released
        with anyio.fail_after(5):
            await agent.dispose()
            assert (await after.wait()).kind == "disposed"
        assert agent.phase is Phase.DISPOSED and not loops(agent)


async def test_a_loop_stopped_by_its_task_group_leaves_the_agent_stopped_until_disposed(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"hang": True}])
    async with ctx.running():
        agent, ticket = await in_a_hanging_turn(ctx, tmp_path)
        queued = agent.followup(text("queued"))
        with anyio.CancelScope(shield=True), anyio.fail_after(5):
            ctx.tasks.cancel_scope.cancel()  # as the context does as it stops
            assert (await ticket.wait()).kind == "disposed"
            assert (await queued.wait()).kind == "disposed"
            assert agent.phase is Phase.STOPPED and not agent.busy
            # No loop runs again: a message now ends at once rather than waiting for ever.
            assert (await agent.followup(text("late")).wait()).kind == "disposed"
            await agent.dispose()
            assert agent.phase is Phase.DISPOSED and agent.scope.disposed
