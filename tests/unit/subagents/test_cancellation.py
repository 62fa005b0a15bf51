"""Cancellation and ownership: the request's cancel signal is the cancel scope of the task that
awaits the run; after a successful start the caller owns the run."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from acp_agent.agent import Agent
from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.keys import AGENTS
from acp_agent.session import SessionEvent
from acp_agent.subagents import SubagentRequest, UnknownProvider
from acp_agent.subagents import spawn as spawn_plugin
from acp_agent.subagents import tool as tool_plugin
from acp_agent.subagents.driver import PARENT_CANCELLED
from acp_agent.subagents.registry import SUBAGENTS
from tests.unit.subagents.conftest import Harness, bash, delegate, kinds, logged, of_type, results, text

pytestmark = pytest.mark.anyio


def nothing_left_of(h: Harness, parent: Agent, child: Agent) -> None:
    assert list(h.ctx.get(AGENTS)) == [parent]
    assert child.scope.disposed and not child.busy
    assert not [task for task in anyio.get_running_tasks() if task.name == f"agent {child.route}"]


async def test_cancelling_the_parent_aborts_the_running_child(harness: Callable[..., Harness]) -> None:
    h = harness({"s1": [{"toolCalls": [delegate("a", "hang")]}], "s1/a": [{"hang": True}]})
    async with h.ctx.running():
        parent = await h.parent()
        ticket = parent.followup(text("go"))
        while len(h.published) < 2:
            await anyio.sleep(0.001)
        child = h.agent("s1/a")
        await logged(child, "assistant/chunk", "text-delta")
        try:
            with anyio.fail_after(2):
                parent.cancel("stopped by the user")
                reason = await ticket.wait()
        except TimeoutError:
            await child.dispose()  # a child the cancel missed would otherwise hang the shutdown
            raise
        assert reason.dump() == {"kind": "aborted", "reason": "stopped by the user"}
        nothing_left_of(h, parent, child)
        events_then = len(child.session.events)
        await anyio.sleep(0.05)
        assert len(child.session.events) == events_then  # nothing runs after
    [end] = of_type(child, "turn/end")
    assert end.reason.dump() == {"kind": "aborted", "reason": PARENT_CANCELLED}
    assert PARENT_CANCELLED == "the parent's turn was cancelled"
    assert of_type(child, "assistant/message")[0].interrupted
    [result] = of_type(parent, "tool/result")
    assert result.is_error and result.error.code == "cancelled"
    assert results(parent) == ["Error: the turn was cancelled before this call finished"]
    assert kinds(parent)[-2:] == ["step/end", "turn/end"]
    assert len(h.of("s1")) == 1  # no model call after the cancel


async def test_a_cancel_racing_a_completed_child_leaves_it_completed(harness: Callable[..., Harness]) -> None:
    h = harness({"s1": [{"toolCalls": [delegate("a", "quick")]}], "s1/a": [{"text": "done in time"}]})
    holder: list[Agent] = []

    def cancel_at_the_childs_end(agent: Agent) -> None:
        if agent.route == "s1/a":

            def watch(event: SessionEvent) -> None:
                if event.type == "turn/end":  # the child's turn is over; the parent still waits for it
                    holder[0].cancel("too late")

            agent.session.subscribe(watch)

    h.ctx.events.on(PUBLISHED, cancel_at_the_childs_end)
    async with h.ctx.running():
        parent = await h.parent()
        holder.append(parent)
        with anyio.fail_after(5):
            reason = await parent.followup(text("go")).wait()
        assert reason.dump() == {"kind": "aborted", "reason": "too late"}
        child = h.agent("s1/a")
        nothing_left_of(h, parent, child)
    assert [end.reason.kind for end in of_type(child, "turn/end")] == ["completed"]
    assert results(parent) == ["Error: the turn was cancelled before this call finished"]


async def test_a_cancel_at_the_hand_off_disposes_the_child(harness: Callable[..., Harness]) -> None:
    h = harness({"s1": [{"toolCalls": [delegate("a", "x")]}], "s1/a": [{"text": "never"}]})
    holder: list[Agent] = []

    def cancel_at_publication(agent: Agent) -> None:
        if agent.route == "s1/a":
            holder[0].cancel("cancelled at the hand-off")

    h.ctx.events.on(PUBLISHED, cancel_at_publication)
    async with h.ctx.running():
        parent = await h.parent()
        holder.append(parent)
        with anyio.fail_after(5):
            reason = await parent.followup(text("go")).wait()
        assert reason.dump() == {"kind": "aborted", "reason": "cancelled at the hand-off"}
        child = h.agent("s1/a")
        nothing_left_of(h, parent, child)
    assert kinds(child) == []  # its turn was never queued
    assert h.of("s1/a") == []
    assert results(parent) == ["Error: the turn was cancelled before this call finished"]


async def test_a_start_cancelled_at_the_hand_off_returns_no_run(harness: Callable[..., Harness]) -> None:
    h = harness({"s1/#1": [{"text": "never"}]})
    async with h.ctx.running():
        parent = await h.parent()
        with anyio.CancelScope() as request:
            h.ctx.events.on(PUBLISHED, lambda agent: request.cancel())
            await h.ctx.get(SUBAGENTS).start("spawn", SubagentRequest(parent=parent, prompt="x"))
            pytest.fail("the start returned a run")
        assert request.cancelled_caught
        nothing_left_of(h, parent, h.agent("s1/#1"))


async def test_unloading_the_provider_does_not_revoke_a_started_run(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("t", "work", tool="temp_agent")]}, {"text": "ok"}],
            "s1/t": [{"toolCalls": [bash("b", "sleep 0.05; echo still here")]}, {"text": "finished anyway"}],
        }
    )
    unload = spawn_plugin.apply(h.ctx, spawn_plugin.Config(provider_name="temp"))
    tool_plugin.apply(h.ctx, tool_plugin.Config(tool_name="temp_agent", provider="temp"))

    def unload_once_started(agent: Agent) -> None:
        if agent.route == "s1/t":

            def watch(event: SessionEvent) -> None:
                if event.type == "turn/start":  # the start has returned: the prompt is queued
                    unload()

            agent.session.subscribe(watch)

    h.ctx.events.on(PUBLISHED, unload_once_started)
    async with h.ctx.running():
        parent = await h.parent()
        with anyio.fail_after(5):
            assert (await parent.followup(text("go")).wait()).kind == "completed"
        with pytest.raises(UnknownProvider):
            h.ctx.get(SUBAGENTS).get("temp")
    child = h.agent("s1/t")
    assert results(child) == ["still here\n"]
    assert of_type(child, "turn/end")[0].reason.kind == "completed"
    assert results(parent) == ["finished anyway"]


async def test_steering_sent_to_the_child_during_its_run_belongs_to_the_child(
    harness: Callable[..., Harness],
) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "start")]}, {"text": "ok"}],
            "s1/a": [{"toolCalls": [bash("b", "true")]}, {"text": "steered answer"}],
        }
    )

    def steer_the_child(agent: Agent) -> None:
        if agent.route == "s1/a":

            def watch(event: SessionEvent) -> None:
                if event.type == "tool/call":
                    agent.steer(text("also consider this"))

            agent.session.subscribe(watch)

    h.ctx.events.on(PUBLISHED, steer_the_child)
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
    child = h.agent("s1/a")
    said = [(m.source.kind, m.content[0].text) for m in of_type(child, "user/message")]
    assert said == [("user", "start"), ("steer", "also consider this")]
    assert [end.reason.kind for end in of_type(child, "turn/end")] == ["completed"]  # one run, one turn
    assert h.of("s1/a")[1].messages[-1].content[0].text == "also consider this"
    assert results(parent) == ["steered answer"]
    assert [m.content[0].text for m in of_type(parent, "user/message")] == ["go"]
