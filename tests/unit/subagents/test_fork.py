"""`fork`: the child is seeded with the parent's completed turns, never with the open one."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from acp_agent.session.log import completed_turn_prefix
from tests.unit.subagents.conftest import Harness, delegate, kinds, of_type, results, text

pytestmark = pytest.mark.anyio


def fork(call_id: str, prompt: str) -> dict[str, object]:
    return delegate(call_id, prompt, tool="subagent_fork")


async def test_a_fork_is_seeded_with_the_completed_turns_only(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"text": "noted: 42"}, {"toolCalls": [fork("f", "what number did I give?")]}, {"text": "ok"}],
            "s1/f": [{"text": "you said 42"}],
        }
    )
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("remember 42")).wait()
        completed = parent.session.all_events()
        with anyio.fail_after(5):
            await parent.followup(text("now fork")).wait()
    child = h.agent("s1/f")
    seed = completed_turn_prefix(completed)
    assert seed == completed  # the whole first turn, and nothing of the second
    # The child's log opens with exactly that prefix; its own turn follows the seed's numbering.
    assert child.session.all_events()[: len(seed)] == seed
    assert kinds(child)[len(seed)] == "turn/start"
    assert of_type(child, "turn/start")[-1].turn == 2
    assert child.session.header.seed_length == len(seed) == h.header(child)["seedLength"]
    # The open turn (its prompt, the forking call) is nowhere in the child.
    said = [m.content[0].text for m in of_type(child, "user/message")]
    assert said == ["remember 42", "what number did I give?"]
    assert "tool/call" not in kinds(child)
    [request] = h.of("s1/f")
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert request.messages[1].content[0].text == "noted: 42"
    assert results(parent) == ["you said 42"]


async def test_a_fork_on_the_first_turn_has_an_empty_seed(harness: Callable[..., Harness]) -> None:
    h = harness({"s1": [{"toolCalls": [fork("f", "alone")]}, {"text": "ok"}], "s1/f": [{"text": "fresh"}]})
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("fork at once")).wait()
    child = h.agent("s1/f")
    assert kinds(child)[:2] == ["turn/start", "user/message"]
    assert of_type(child, "turn/start")[0].turn == 1
    assert "seedLength" not in h.header(child)
    assert [m.role for m in h.of("s1/f")[0].messages] == ["user"]
    assert results(parent) == ["fresh"]


async def test_a_fork_that_fails_before_any_output_returns_none_of_the_seed(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"text": "the seeded answer"}, {"toolCalls": [fork("f", "try")]}, {"text": "ok"}],
            "s1/f": [{"throw": {"message": "down", "code": "SERVER", "status": 503}}],
        }
    )
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("one")).wait()
        await parent.followup(text("two")).wait()
    child = h.agent("s1/f")
    assert of_type(child, "turn/end")[-1].reason.kind == "error"
    assert results(parent) == ["Error: subagent run failed"]  # not the seeded parent's last message
    assert of_type(parent, "tool/result")[0].error.code == "subagent_error"
