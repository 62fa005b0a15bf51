"""What the parent model reads when a child did not complete, and children running together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from acp_agent.agent import Agent
from acp_agent.session.events import TurnInterrupted
from acp_agent.subagents import SubagentResult
from acp_agent.subagents.driver import describe
from acp_agent.subagents.tool import FORK_DESCRIPTION, SPAWN_DESCRIPTION, SubagentParams
from acp_agent.tools.registry import TOOLS
from tests.unit.subagents.conftest import Harness, bash, delegate, logged, of_type, results, text

pytestmark = pytest.mark.anyio

PARTIAL = "\nPartial output before the run ended:\n"


@pytest.mark.parametrize(
    ("child", "expected", "code"),
    [
        (
            [{"text": "half done", "finish": "error", "message": "boom", "code": "X"}],
            "Error: subagent run failed" + PARTIAL + "half done",
            "subagent_error",
        ),
        (
            [{"throw": {"message": "unauthorized", "code": "AUTH", "status": 401}}],
            "Error: subagent run failed",
            "subagent_error",
        ),
        (
            [{"text": "cut short", "finish": "max-tokens"}],
            "Error: subagent run hit its token limit before finishing" + PARTIAL + "cut short",
            "subagent_max-tokens",
        ),
        (
            [{"text": "still working", "toolCalls": [bash("b", "true")]}] * 2,
            "Error: subagent run ended abnormally (max-steps)" + PARTIAL + "still working",
            "subagent_max-steps",
        ),
    ],
    ids=["error", "error-silent", "max-tokens", "max-steps"],
)
async def test_a_child_that_did_not_complete_gives_an_error_result(
    child: list[dict[str, Any]], expected: str, code: str, harness: Callable[..., Harness]
) -> None:
    h = harness({"s1": [{"toolCalls": [delegate("a", "x")]}, {"text": "ok"}], "s1/a": child}, agents={"maxSteps": 2})
    async with h.ctx.running():
        parent = await h.parent()
        assert (await parent.followup(text("go")).wait()).kind == "completed"
    assert results(parent) == [expected]
    [result] = of_type(parent, "tool/result")
    assert result.is_error and result.error.code == code


async def until_streaming(h: Harness, route: str) -> Agent:
    with anyio.fail_after(5):
        while not [agent for agent in h.published if agent.route == route]:
            await anyio.sleep(0.001)
    child = h.agent(route)
    await logged(child, "assistant/chunk", "text-delta")
    return child


async def test_a_child_cancelled_on_its_own_reports_cancelled_with_its_partial_text(
    harness: Callable[..., Harness],
) -> None:
    h = harness({"s1": [{"toolCalls": [delegate("a", "x")]}, {"text": "ok"}], "s1/a": [{"hang": True}]})
    async with h.ctx.running():
        parent = await h.parent()
        ticket = parent.followup(text("go"))
        child = await until_streaming(h, "s1/a")
        child.cancel("the user stopped the child")
        with anyio.fail_after(5):
            assert (await ticket.wait()).kind == "completed"  # the parent goes on
    assert results(parent) == ["Error: subagent run was cancelled" + PARTIAL + "partial"]
    assert of_type(parent, "tool/result")[0].error.code == "subagent_aborted"
    assert of_type(child, "turn/end")[0].reason.dump() == {"kind": "aborted", "reason": "the user stopped the child"}


async def test_a_child_disposed_under_the_parent_reports_cancelled(harness: Callable[..., Harness]) -> None:
    h = harness({"s1": [{"toolCalls": [delegate("a", "x")]}, {"text": "ok"}], "s1/a": [{"hang": True}]})
    async with h.ctx.running():
        parent = await h.parent()
        ticket = parent.followup(text("go"))
        child = await until_streaming(h, "s1/a")
        await child.dispose()
        with anyio.fail_after(5):
            assert (await ticket.wait()).kind == "completed"
    assert results(parent) == ["Error: subagent run was cancelled" + PARTIAL + "partial"]
    assert of_type(parent, "tool/result")[0].error.code == "subagent_disposed"


def test_an_interrupted_child_reads_as_cancelled() -> None:
    """`interrupted` (a turn closed when its log was repaired) counts as cancelled; the tool adds `Error: `."""
    assert describe(SubagentResult(reason=TurnInterrupted()), structured=False) == (True, "subagent run was cancelled")


async def test_two_children_of_one_step_run_at_the_same_time(harness: Callable[..., Harness]) -> None:
    def waits_for(mine: str, theirs: str) -> str:
        return f"touch {mine}; while [ ! -f {theirs} ]; do sleep 0.01; done; echo saw {theirs}"

    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "first"), delegate("b", "second")]}, {"text": "ok"}],
            "s1/a": [{"toolCalls": [bash("w", waits_for("a.ready", "b.ready"))]}, {"text": "A done"}],
            "s1/b": [{"toolCalls": [bash("w", waits_for("b.ready", "a.ready"))]}, {"text": "B done"}],
        }
    )
    async with h.ctx.running():
        parent = await h.parent()
        with anyio.fail_after(4):  # one child alone would wait for its bash timeout (5 s)
            assert (await parent.followup(text("go")).wait()).kind == "completed"
    assert results(h.agent("s1/a")) == ["saw b.ready\n"]
    assert results(h.agent("s1/b")) == ["saw a.ready\n"]
    assert [r.call_id for r in of_type(parent, "tool/result")] == ["a", "b"]  # model order
    assert results(parent) == ["A done", "B done"]


async def test_the_delegation_tools_as_the_parent_model_and_the_editor_see_them(
    harness: Callable[..., Harness],
) -> None:
    h = harness([], fork_tool={"description": "Fork with care."})
    spawn_tool, fork_tool = h.ctx.get(TOOLS).get("subagent", None), h.ctx.get(TOOLS).get("subagent_fork", None)
    assert spawn_tool.description == SPAWN_DESCRIPTION and fork_tool.description == "Fork with care."
    assert spawn_tool.concurrency_safe and fork_tool.concurrency_safe
    parameters = spawn_tool.schema().parameters
    assert parameters["required"] == ["description", "prompt"]
    assert set(parameters["properties"]) == {"description", "prompt", "outputSchema", "run_in_background"}
    shown = spawn_tool.present(SubagentParams(description="Count files", prompt="How many?"))
    assert (shown.title, shown.kind, shown.content) == ("Count files", "other", ["How many?"])
    assert spawn_tool.present(SubagentParams(description="", prompt="p")).title == "subagent"
    assert FORK_DESCRIPTION != SPAWN_DESCRIPTION
