"""Background children in process: what the scenarios (fixtures/background-*) do not reach: the
parent's cancel-all and disposal, the limit, refused combinations, unknown ids, and what the
parent model reads of a notice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from acp_agent.agent import Agent
from acp_agent.kernel import Row, compose
from acp_agent.llm.request import UserMessage
from acp_agent.session import TextContent
from acp_agent.session.events import TurnCompleted
from acp_agent.subagents import texts
from acp_agent.subagents.driver import ALL
from acp_agent.subagents.keys import BACKGROUND
from acp_agent.subagents.registry import SUBAGENTS, SubagentRequest, SubagentResult
from tests.unit.subagents.conftest import Harness, call, delegate, logged, of_type, results, text

pytestmark = pytest.mark.anyio


def background(call_id: str, prompt: str, **extra: Any) -> dict[str, Any]:
    return delegate(call_id, prompt, run_in_background=True, **extra)


def with_tools(h: Harness) -> Harness:
    compose([Row(id="subagent-agents", name="acp_agent.subagents.agents")], h.ctx)
    return h


async def published(h: Harness, count: int) -> None:
    with anyio.fail_after(5):
        while len(h.published) < count:
            await anyio.sleep(0.001)


async def test_a_notice_wakes_an_idle_parent_and_the_model_reads_it_as_a_user_message(
    harness: Callable[..., Harness],
) -> None:
    h = harness({
        "s1": [{"toolCalls": [background("a", "pick")]}, {"text": "started"}, {"notices": 1, "text": "it said kiwi"}],
        "s1/a": [{"after": {"s1": 2}, "text": "kiwi"}],
    })  # fmt: skip
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
        await logged(parent, "turn/end")
        with anyio.fail_after(5):
            while len(of_type(parent, "turn/end")) < 2:
                await anyio.sleep(0.001)
        await parent.when_idle()
        child = h.agent("s1/a")
        [notice] = of_type(parent, "subagent/notice")
        assert notice.text == texts.notice_settled(child.id, "do a", "kiwi", False)
        assert (notice.route, notice.kind, notice.turn) == ("s1/a", "settled", 1)
        last = h.of("s1")[-1].messages[-1]
        assert isinstance(last, UserMessage) and last.content == [TextContent(text=notice.text)]
        starts = of_type(parent, "turn/start")
        assert [start.trigger.source for start in starts] == [{"kind": "user"}, {"kind": "subagent"}]
        assert len(of_type(parent, "user/message")) == 1  # the woken turn has no message of its own
        await parent.dispose()


HANGING = {"s1": [{"toolCalls": [background("a", "wait")]}, {"text": "started"}], "s1/a": [{"hang": True}]}
"""A parent that starts a background child whose model call never ends, and ends its turn."""


async def hanging_child(h: Harness) -> tuple[Agent, Agent]:
    """The parent of `HANGING` once its turn ended, and its child once its call streams."""
    parent = await h.parent()
    await parent.followup(text("go")).wait()
    await published(h, 2)
    child = h.agent("s1/a")
    await logged(child, "assistant/chunk", "text-delta")
    return parent, child


async def test_the_parents_cancel_all_stops_its_children_without_waking_it(harness: Callable[..., Harness]) -> None:
    h = harness(HANGING)
    async with h.ctx.running():
        parent, child = await hanging_child(h)
        parent.cancel("stop everything")
        with anyio.fail_after(5):
            await child.when_idle()
        [end] = of_type(child, "turn/end")
        assert end.reason.dump() == {"kind": "aborted", "reason": texts.PARENT_CANCELLED_ALL}
        await anyio.sleep(0.01)
        assert len(of_type(parent, "turn/start")) == 1  # not woken
        entry = h.ctx.get(BACKGROUND).find(parent, child.id)
        assert entry is not None and entry.state == "aborted"
        await parent.dispose()


async def test_disposing_the_parent_disposes_its_running_children_first(harness: Callable[..., Harness]) -> None:
    h = harness(HANGING)
    async with h.ctx.running():
        parent, child = await hanging_child(h)
        with anyio.fail_after(5):
            await parent.dispose()
        assert child.scope.disposed
        assert [end.reason.kind for end in of_type(child, "turn/end")] == ["disposed"]
        assert h.ctx.get(BACKGROUND).children(parent) == []


async def test_the_limit_and_a_schema_refuse_a_background_start(harness: Callable[..., Harness]) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    h = harness({
        "s1": [{"toolCalls": [background("a", "wait"), background("b", "more"),
                              background("c", "typed", outputSchema=schema)]}, {"text": "ok"}],
        "s1/a": [{"hang": True}],
    })  # fmt: skip
    h.ctx.get(BACKGROUND).limit = 1
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
        assert results(parent)[1:] == [f"Error: {texts.background_limit(1)}", f"Error: {texts.BACKGROUND_WITH_SCHEMA}"]
        assert len(h.published) == 2  # the parent and one child
        await parent.dispose()


async def test_the_agent_tools_name_an_unknown_id_and_a_child_that_does_not_run(
    harness: Callable[..., Harness],
) -> None:
    h = with_tools(harness({
        "s1": [
            {"toolCalls": [background("a", "pick")]},
            {"after": {"s1/a": 1}, "toolCalls": [call("m", "send_message", agent_id="nobody", message="hi"),
                                                 call("s", "stop_agent", agent_id="nobody")]},
            {"notices": 1, "toolCalls": [call("s2", "stop_agent", agent_id="{{agent:s1/a}}"),
                                         call("m2", "send_message", agent_id="{{agent:s1/a}}", message="again")]},
            {"text": "done"},
            {"notices": 2, "toolCalls": [call("l", "list_agents")]},
            {"text": "listed"},
        ],
        "s1/a": [{"text": "kiwi"}, {"text": "kiwi again"}],
    }))  # fmt: skip
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
        child = h.agent("s1/a")
        with anyio.fail_after(5):
            while len(of_type(parent, "turn/end")) < 2:
                await anyio.sleep(0.001)
        await parent.when_idle()
        unknown = f"Error: {texts.unknown_agent('nobody', [child.id])}"
        assert results(parent)[1:] == [
            unknown, unknown,
            texts.not_running(child.id, "completed"), texts.message_sent(child.id),
            texts.agent_line(child.id, "completed", "do a", texts.activity_said("kiwi again")),
        ]  # fmt: skip
        await parent.dispose()


async def test_a_provider_whose_runs_are_not_in_process_cannot_run_in_the_background(
    harness: Callable[..., Harness],
) -> None:
    disposed: list[bool] = []

    class Remote:
        name = "remote"
        capabilities = ALL

        async def start(self, request: SubagentRequest) -> Remote:
            return self

        async def result(self) -> SubagentResult:
            return SubagentResult(reason=TurnCompleted(), output="x")

        async def dispose(self) -> None:
            disposed.append(True)

    h = harness({"s1": [{"toolCalls": [background("a", "go")]}, {"text": "ok"}]}, spawn_tool={"provider": "remote"})
    h.ctx.get(SUBAGENTS).register(Remote())
    async with h.ctx.running():
        parent: Agent = await h.parent()
        await parent.followup(text("go")).wait()
        assert results(parent)[0] == f"Error: {texts.background_unsupported('remote')}"
        assert disposed == [True]
        await parent.dispose()
