"""The in-process driver's start contract through the real loop: depth, lineage, routes,
persona, tool filter, and what the parent reads back."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from acp_agent.agent import Agent, AgentOptions
from acp_agent.agent.factory import Lineage
from acp_agent.agent.keys import AGENTS, PROMPT
from acp_agent.subagents import SubagentRequest
from acp_agent.subagents.driver import MAX_SAFE_INTEGER
from acp_agent.subagents.registry import SUBAGENTS
from tests.unit.subagents.conftest import Harness, bash, delegate, kinds, of_type, results, text

pytestmark = pytest.mark.anyio


async def run_parent(h: Harness, prompt: str = "go", **create: Any) -> Agent:
    parent = await h.parent(**create)
    with anyio.fail_after(5):
        await parent.followup(text(prompt)).wait()
    return parent


async def test_each_child_is_one_deeper_and_the_depth_is_persisted(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "go deeper")]}, {"text": "parent done"}],
            "s1/a": [{"toolCalls": [delegate("b", "deepest")]}, {"text": "a done"}],
            "s1/a/b": [{"toolCalls": [delegate("c", "too deep")]}, {"text": "b done"}],
        }
    )
    async with h.ctx.running():
        parent = await run_parent(h)
    a, b = h.agent("s1/a"), h.agent("s1/a/b")
    assert [agent.route for agent in h.published] == ["s1", "s1/a", "s1/a/b"]  # no s1/a/b/c
    assert "delegationDepth" not in h.header(parent)  # a top-level agent is depth 0
    assert (h.header(a)["delegationDepth"], h.header(b)["delegationDepth"]) == (1, 2)
    assert (a.session.header.delegation_depth, b.session.header.delegation_depth) == (1, 2)
    assert h.header(a)["parentSession"] == parent.id and h.header(b)["parentSession"] == a.id
    assert (h.header(a)["spawnCallId"], h.header(b)["spawnCallId"]) == ("a", "b")
    assert (h.header(a)["route"], h.header(b)["route"]) == ("s1/a", "s1/a/b")
    assert results(b) == ["Error: subagent depth 3 exceeds maxDepth 2"]
    assert of_type(b, "tool/result")[0].error.code == "subagent_not_started"
    assert results(a) == ["b done"]
    assert results(parent) == ["a done"]
    assert list(of_type(parent, "turn/end"))[0].reason.kind == "completed"


ONE_CHILD = {"s1": [{"toolCalls": [delegate("a", "x")]}, {"text": "ok"}], "s1/a": [{"text": "child"}]}


def with_depth(value: Any) -> Callable[[Agent], None]:
    def setup(agent: Agent) -> None:
        agent.session.header.delegation_depth = value

    return setup


@pytest.mark.parametrize(
    "stored", [-1, 1.5, True, MAX_SAFE_INTEGER + 1], ids=["negative", "fraction", "bool", "unsafe"]
)
async def test_a_malformed_stored_parent_depth_refuses_the_child(stored: Any, harness: Callable[..., Harness]) -> None:
    h = harness(ONE_CHILD)
    async with h.ctx.running():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic warns when it writes 1.5 as an int field
            parent = await h.parent(setup=with_depth(stored))
        await parent.followup(text("go")).wait()
    assert results(parent) == ["Error: agent subagentDepth must be a non-negative safe integer"]
    assert h.published == [parent] and h.of("s1/a") == []


async def test_a_child_beyond_the_safe_integers_is_refused(harness: Callable[..., Harness]) -> None:
    h = harness(ONE_CHILD, spawn_tool={"maxDepth": None})
    async with h.ctx.running():
        parent = await run_parent(h, lineage=Lineage(parent_session="root", delegation_depth=MAX_SAFE_INTEGER))
    assert h.header(parent)["delegationDepth"] == MAX_SAFE_INTEGER
    assert results(parent) == ["Error: subagent child depth exceeds the safe-integer range"]
    assert h.published == [parent]


async def test_without_a_max_depth_any_safe_depth_may_delegate(harness: Callable[..., Harness]) -> None:
    h = harness(ONE_CHILD, spawn_tool={"maxDepth": None})
    async with h.ctx.running():
        parent = await run_parent(h, lineage=Lineage(parent_session="root", delegation_depth=MAX_SAFE_INTEGER - 1))
    assert results(parent) == ["child"]
    assert h.header(h.agent("s1/a"))["delegationDepth"] == MAX_SAFE_INTEGER


async def test_the_child_inherits_cwd_lineage_and_options(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "where are you?")]}, {"text": "ok"}],
            "s1/a": [{"toolCalls": [bash("p", "pwd")]}, {"text": "here"}],
        }
    )
    options = AgentOptions(provider="prov", model="mod", max_tokens=77, max_steps=5)
    async with h.ctx.running():
        parent = await run_parent(h, options=options)
    child = h.agent("s1/a")
    assert child.options == options
    assert results(child) == [f"{h.workspace}\n"]  # bash ran in the parent's cwd
    assert child.session.cwd == parent.session.cwd == str(h.workspace)
    header = h.header(child)
    assert (header["cwd"], header["parentSession"], header["route"]) == (str(h.workspace), parent.id, "s1/a")
    for request in h.of("s1/a"):
        assert (request.provider, request.model, request.max_tokens) == ("prov", "mod", 77)
        assert request.session_id == child.id
    assert of_type(child, "user/message")[0].content[0].text == "where are you?"  # the task, verbatim


async def test_a_request_may_override_the_childs_options(harness: Callable[..., Harness]) -> None:
    h = harness({"s1/#1": [{"text": "from another model"}]})
    async with h.ctx.running():
        parent = await h.parent()
        other = AgentOptions(provider="other", model="bigger", max_tokens=9)
        run = await h.ctx.get(SUBAGENTS).start("spawn", SubagentRequest(parent=parent, prompt="x", agent_options=other))
        try:
            assert (await run.result()).output == "from another model"
        finally:
            await run.dispose()
    [request] = h.of("s1/#1")
    assert (request.provider, request.model, request.max_tokens) == ("other", "bigger", 9)


async def test_a_reused_call_id_gets_a_numbered_route(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [
                {"toolCalls": [delegate("a", "first")]},
                {"toolCalls": [delegate("a", "second")]},
                {"text": "ok"},
            ],
            "s1/a": [{"text": "one"}],
            "s1/a#2": [{"text": "two"}],
        }
    )
    async with h.ctx.running():
        parent = await run_parent(h)
    assert [agent.route for agent in h.published] == ["s1", "s1/a", "s1/a#2"]
    assert results(parent) == ["one", "two"]
    assert h.header(h.agent("s1/a#2"))["spawnCallId"] == "a"


async def test_children_no_tool_call_spawned_are_numbered_and_never_reuse_a_route(
    harness: Callable[..., Harness],
) -> None:
    h = harness({"s1/#1": [{"text": "one"}], "s1/#2": [{"text": "two"}], "s1/#3": [{"text": "three"}]})
    outputs = []
    async with h.ctx.running():
        parent = await h.parent()
        first = await h.ctx.get(SUBAGENTS).start("spawn", SubagentRequest(parent=parent, prompt="1"))
        second = await h.ctx.get(SUBAGENTS).start("fork", SubagentRequest(parent=parent, prompt="2"))
        for run in (first, second):
            outputs.append((await run.result()).output)
            await run.dispose()
        # Both are gone; the next is still the third (the replay model routes the n-th log to #n).
        third = await h.ctx.get(SUBAGENTS).start("spawn", SubagentRequest(parent=parent, prompt="3"))
        outputs.append((await third.result()).output)
        await third.dispose()
        assert list(h.ctx.get(AGENTS)) == [parent]
    assert [agent.route for agent in h.published] == ["s1", "s1/#1", "s1/#2", "s1/#3"]
    assert outputs == ["one", "two", "three"]
    assert all("spawnCallId" not in h.header(child) for child in h.published[1:])


PERSONA = "You are a careful child agent."


async def test_the_persona_is_the_childs_alone(harness: Callable[..., Harness]) -> None:
    h = harness(
        {"s1": [{"toolCalls": [delegate("a", "x")]}, {"text": "ok"}], "s1/a": [{"text": "child"}]},
        spawn_tool={"persona": PERSONA},
    )
    async with h.ctx.running():
        await run_parent(h)
        assert [section.name for section in h.ctx.get(PROMPT).sections(None)] == ["persona"]  # the child's is gone
    [child_request] = h.of("s1/a")
    assert child_request.system.startswith(PERSONA)
    assert "You are acp-agent" not in child_request.system  # the child's persona shadows the default
    for request in h.of("s1"):
        assert request.system.startswith("You are acp-agent") and PERSONA not in request.system


async def test_a_filtered_child_cannot_call_bash_and_the_parent_still_can(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [
                {"toolCalls": [delegate("a", "try bash")]},
                {"toolCalls": [bash("b", "echo parent")]},
                {"text": "ok"},
            ],
            "s1/a": [{"toolCalls": [bash("c", "echo child")]}, {"text": "could not"}],
        },
        spawn_tool={"tools": ["subagent"]},
    )
    async with h.ctx.running():
        parent = await run_parent(h)
    child = h.agent("s1/a")
    assert results(child) == ["Error: unknown tool 'bash'"]
    assert results(parent) == ["could not", "parent\n"]
    assert {tuple(t.name for t in r.tools) for r in h.of("s1/a")} == {("subagent",)}
    assert {tuple(t.name for t in r.tools) for r in h.of("s1")} == {("bash", "subagent", "subagent_fork")}
    assert "- bash:" not in h.of("s1/a")[0].system and "- bash:" in h.of("s1")[0].system


async def test_the_result_is_the_childs_last_assistant_text(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "x")]}, {"text": "ok"}],
            "s1/a": [
                {"text": "let me look", "toolCalls": [bash("b", "echo intermediate")]},
                {"text": "the answer", "toolCalls": [bash("c", "true")]},
                {},  # a last message without text does not hide the answer (asked three times:
                {},  # an answer with nothing in it is asked again, at most twice)
                {},
            ],
        }
    )
    async with h.ctx.running():
        parent = await run_parent(h)
    assert results(parent)[0] == "the answer"
    assert of_type(h.agent("s1/a"), "assistant/message")[-1].content == []


async def test_a_child_that_completes_silently_gives_an_empty_result(harness: Callable[..., Harness]) -> None:
    # An answer with nothing in it is asked again, at most twice: three empty answers.
    h = harness({"s1": [{"toolCalls": [delegate("a", "x")]}, {"text": "ok"}], "s1/a": [{}, {}, {}]})
    async with h.ctx.running():
        parent = await run_parent(h)
    [result] = of_type(parent, "tool/result")
    assert result.content[0].text == "" and not result.is_error


async def test_the_child_is_disposed_when_its_result_is_in(harness: Callable[..., Harness]) -> None:
    h = harness(ONE_CHILD)
    async with h.ctx.running():
        parent = await run_parent(h)
        child = h.agent("s1/a")
        assert list(h.ctx.get(AGENTS)) == [parent]
        assert child.scope.disposed
        assert not [task for task in anyio.get_running_tasks() if task.name == "agent s1/a"]
    assert kinds(child)[-1] == "turn/end"
