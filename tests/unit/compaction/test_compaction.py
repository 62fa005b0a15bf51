"""Compaction through the real parts: the agent loop, the session log, the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.agent import Agent
from acp_agent.agent.keys import AGENTS
from acp_agent.commands import COMMANDS, REPLY_EVENT
from acp_agent.compaction import texts
from acp_agent.kernel import Context, Row, compose
from acp_agent.llm.request import UserMessage, derive_messages
from acp_agent.llm.texts import SUMMARIZATION_PROMPT, framed_summary, summarization_prompt
from acp_agent.session import TextContent
from acp_agent.session.persistence import SESSIONS
from tests.unit.agent.conftest import spied

pytestmark = pytest.mark.anyio

WINDOW = 1000
"""The agents' context window in these tests: a compaction is due past 800 tokens."""
FULL = {"inputTokens": 900, "outputTokens": 10}
"""A model call's usage that leaves the context past the threshold."""


def text(value: str) -> list[TextContent]:
    return [TextContent(text=value)]


def compacting(tmp_path: Path, script: Any, **config: Any) -> tuple[Context, list[Any]]:
    ctx, requests = spied(tmp_path, script, contextWindow=WINDOW, maxSteps=2)
    compose(
        [
            Row(id="commands", name="acp_agent.commands.plugin"),
            Row(id="compaction", name="acp_agent.compaction.plugin", config=config),
        ],
        ctx,
    )
    return ctx, requests


def kinds(agent: Agent) -> list[str]:
    """Every event's type, the streamed chunks (on disk only) included."""
    return [event.type for event in agent.session.all_events()]


def purposes(agent: Agent) -> list[str | None]:
    return [event.data.purpose for event in agent.session.events if event.type == "step/start"]


def compactions(agent: Agent) -> list[Any]:
    return [event.data for event in agent.session.events if event.type == "compaction"]


def prompts(request: Any) -> list[Any]:
    return [message.content for message in request.messages if isinstance(message, UserMessage)]


async def test_a_turn_past_the_threshold_starts_with_a_compaction_and_the_model_sees_the_summary(
    tmp_path: Path,
) -> None:
    ctx, requests = compacting(tmp_path, [{"text": "one", "usage": FULL}, {"text": "The summary."}, {"text": "two"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert (await agent.followup(text("first")).wait()).kind == "completed"
        assert (await agent.followup(text("second")).wait()).kind == "completed"
        await agent.dispose()
        loaded = ctx.get(SESSIONS).load(agent.id)  # what session/load and resume read back
    summarize, answer = requests[1:]
    assert prompts(summarize) == [text("first"), text(SUMMARIZATION_PROMPT)]
    assert [m.role for m in summarize.messages] == ["user", "assistant", "user"]
    # The summary, the kept user message and the open turn's: the first answer is gone.
    assert [m.content for m in answer.messages] == [text(framed_summary("The summary.")), text("first"), text("second")]
    assert purposes(agent) == [None, "compaction", None]
    [compaction] = compactions(agent)
    assert (compaction.turn, compaction.summary, compaction.trigger) == (2, "The summary.", "threshold")
    first_message = next(e for e in agent.session.events if e.type == "user/message")
    assert compaction.cut_seq == first_message.seq
    assert 0 < compaction.tokens < 800
    assert derive_messages(agent.session.events)[-1].content[0].text == "two"  # type: ignore[union-attr]
    assert derive_messages(loaded.events) == derive_messages(agent.session.events)


async def test_recent_user_messages_are_kept_within_the_budget_and_never_twice_summarized(tmp_path: Path) -> None:
    script = [{"text": "a", "usage": FULL}, {"text": "S1"}, {"text": "b", "usage": FULL}, {"text": "S2"}, {"text": "c"}]
    ctx, requests = compacting(tmp_path, script, keepRecentTokens=3)  # 12 characters: one prompt
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        for prompt in ("old prompt", "new prompt", "last"):
            await agent.followup(text(prompt)).wait()
    assert prompts(requests[1]) == [text("old prompt"), text(SUMMARIZATION_PROMPT)]
    assert [m.content for m in requests[2].messages] == [
        text(framed_summary("S1")),
        text("old prompt"),
        text("new prompt"),
    ]
    # The second summary covers the first and what came after; only the newest prompt is kept.
    assert prompts(requests[3])[0] == text(framed_summary("S1"))
    assert [m.content for m in requests[4].messages] == [text(framed_summary("S2")), text("new prompt"), text("last")]
    assert [c.summary for c in compactions(agent)] == ["S1", "S2"]


async def test_an_overflow_compacts_once_then_retries_and_a_second_overflow_fails(tmp_path: Path) -> None:
    overflow = {"throw": {"message": "the conversation no longer fits", "code": "CONTEXT_OVERFLOW", "status": 400}}
    script = [{"text": "one"}, overflow, {"text": "Summary."}, {"text": "two"}, overflow, {"text": "Again."}, overflow]
    ctx, requests = compacting(tmp_path, script)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup(text("first")).wait()
        assert (await agent.followup(text("second")).wait()).kind == "completed"
        failed = await agent.followup(text("third")).wait()
    assert failed.kind == "error" and failed.code == "CONTEXT_OVERFLOW"  # type: ignore[union-attr]
    assert [c.trigger for c in compactions(agent)] == ["overflow", "overflow"]
    assert [m.content for m in requests[3].messages] == [
        text(framed_summary("Summary.")),
        text("first"),
        text("second"),
    ]
    turn2 = [e.type for e in agent.session.events if getattr(e.data, "turn", None) == 2]
    assert turn2.count("step/start") == 3 and "tool/result" not in turn2
    assert len(requests) == 7


async def test_a_summarization_that_overflows_drops_the_oldest_exchange_until_none_is_left(tmp_path: Path) -> None:
    overflow = {"throw": {"message": "too long", "code": "CONTEXT_OVERFLOW"}}
    script = [
        {"text": "one"},
        {"text": "two", "usage": FULL},
        overflow,
        {"text": "Shorter."},
        {"text": "three", "usage": FULL},
    ]
    script += [overflow] * 4
    ctx, requests = compacting(tmp_path, script)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        for prompt in ("first", "second"):
            await agent.followup(text(prompt)).wait()
        assert (await agent.followup(text("third")).wait()).kind == "completed"
        failed = await agent.followup(text("fourth")).wait()
    assert prompts(requests[2])[:2] == [text("first"), text("second")]
    assert prompts(requests[3])[:1] == [text("second")]  # without the oldest exchange
    assert failed.kind == "error" and failed.code == "CONTEXT_OVERFLOW"  # type: ignore[union-attr]
    # Four exchanges (the summary, the two kept prompts, the third turn): four tries, then nothing is left.
    assert prompts(requests[-1]) == [text("third"), text(SUMMARIZATION_PROMPT)]
    assert len(requests) == 9 and len(compactions(agent)) == 1


async def test_compact_with_a_focus_and_with_nothing_to_compact(tmp_path: Path) -> None:
    ctx, requests = compacting(tmp_path, [{"text": "one"}, {"text": "Focused."}, {"text": "two"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        commands = ctx.get(COMMANDS)
        assert (await commands.start(agent, text("/compact")).wait()).kind == "completed"
        assert requests == []
        [reply] = [e for e in agent.session.events if e.type == REPLY_EVENT]
        assert reply.data.text == texts.NOTHING_TO_COMPACT
        await agent.followup(text("first")).wait()
        assert (await commands.start(agent, text("/compact the API")).wait()).kind == "completed"
        await agent.followup(text("next")).wait()
        assert [c.name for c in commands.commands(agent)] == ["compact", "init", "rename"]
    assert prompts(requests[1]) == [text("first"), text(summarization_prompt("the API"))]
    assert [m.content for m in requests[2].messages] == [text(framed_summary("Focused.")), text("first"), text("next")]
    [compaction] = compactions(agent)
    assert compaction.trigger == "command"


async def test_a_cancel_during_the_summary_leaves_the_history_as_it_was(tmp_path: Path) -> None:
    ctx, requests = compacting(tmp_path, [{"text": "one", "usage": FULL}, {"hang": True}, {"text": "two"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup(text("first")).wait()
        ticket = agent.followup(text("second"))
        with anyio.fail_after(5):
            while "compaction" not in purposes(agent) or kinds(agent)[-1] != "assistant/chunk":
                await anyio.sleep(0.01)
        agent.cancel("stop")
        assert (await ticket.wait()).kind == "aborted"
    assert compactions(agent) == []
    assert kinds(agent)[-4:] == ["assistant/chunk", "assistant/message", "step/end", "turn/end"]
    assert [m.role for m in derive_messages(agent.session.events)] == ["user", "assistant", "user"]
    assert len(requests) == 2


async def test_compaction_steps_do_not_count_towards_max_steps(tmp_path: Path) -> None:
    call = {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": "true"}}], "usage": FULL}
    ctx, requests = compacting(tmp_path, [{"text": "one"}, call, {"text": "Summary."}, {"text": "done"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup(text("first")).wait()
        assert (await agent.followup(text("second")).wait()).kind == "completed"  # maxSteps is 2
    assert purposes(agent) == [None, None, "compaction", None]
    # Mid-turn: the open turn's call and its result stay whole after the summary.
    assert [m.role for m in requests[3].messages] == ["user", "user", "user", "assistant", "tool"]


async def test_a_summary_without_text_fails_the_turn_and_changes_nothing(tmp_path: Path) -> None:
    ctx, _ = compacting(tmp_path, [{"text": "one", "usage": FULL}, {"reasoning": "Thinking only."}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup(text("first")).wait()
        failed = await agent.followup(text("second")).wait()
    assert (failed.kind, failed.message, failed.code) == ("error", texts.NO_SUMMARY, "EMPTY_RESPONSE")  # type: ignore[union-attr]
    assert compactions(agent) == [] and kinds(agent)[-2:] == ["step/end", "turn/end"]


async def test_without_a_command_list_the_agents_still_compact(tmp_path: Path) -> None:
    ctx, requests = spied(
        tmp_path, [{"text": "one", "usage": FULL}, {"text": "S."}, {"text": "two"}], contextWindow=WINDOW
    )
    compose([Row(id="compaction", name="acp_agent.compaction.plugin")], ctx)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup(text("first")).wait()
        await agent.followup(text("second")).wait()
    assert [c.trigger for c in compactions(agent)] == ["threshold"] and len(requests) == 3
