"""Compaction through the real server: what the snapshots of `fixtures/compaction-*` show,
asserted where a reader could miss it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.compaction import texts
from acp_agent.snapshot.result import RunResult
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]


def updates(result: RunResult) -> list[dict[str, Any]]:
    frames = [json.loads(line) for line in result.stdout]
    return [f["params"]["update"] for f in frames if f.get("method") == "session/update"]


def kinds(result: RunResult, *wanted: str) -> list[str]:
    shown = [u["sessionUpdate"] for u in updates(result)]
    return [kind for kind in shown if kind in wanted] if wanted else shown


def events(result: RunResult, route: str = "s1") -> list[dict[str, Any]]:
    return result.logs[route][1:]


def compactions(result: RunResult, route: str = "s1") -> list[dict[str, Any]]:
    return [e["data"] for e in events(result, route) if e["type"] == "compaction"]


def compaction_steps(result: RunResult, route: str = "s1") -> list[tuple[int, int]]:
    return [
        (e["data"]["turn"], e["data"]["step"])
        for e in events(result, route)
        if e["data"].get("purpose") == "compaction"
    ]


def test_an_automatic_compaction_runs_before_the_call_that_would_pass_the_threshold(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "compaction-auto")
    assert result.failures == []
    [compaction] = compactions(result)
    assert (compaction["turn"], compaction["trigger"]) == (2, "threshold")
    assert compaction_steps(result) == [(2, 1)]
    shown = updates(result)
    start = next(i for i, u in enumerate(shown) if u["sessionUpdate"] == "compaction_update")
    # The summary streams as summary chunks, never as the agent's message; then the new size.
    assert [u["sessionUpdate"] for u in shown[start + 1 : start + 3]] == ["compaction_summary_chunk"] * 2
    done = next(
        i for i, u in enumerate(shown) if u.get("status") == "completed" and u["sessionUpdate"] == "compaction_update"
    )
    assert "".join(u["content"]["text"] for u in shown[start + 1 : done]) == compaction["summary"]
    assert shown[done + 1] == {"sessionUpdate": "usage_update", "used": compaction["tokens"], "size": 128000}
    assert [u["sessionUpdate"] for u in shown[done + 2 : done + 4]] == ["usage_update", "tool_call"]  # the turn goes on
    assert texts.repeated(2) not in json.dumps(shown)


def test_compact_with_a_focus_shows_a_card_without_the_capability_and_warns_the_second_time(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "compaction-command")
    assert result.failures == []
    assert [c["trigger"] for c in compactions(result)] == ["command", "command"]
    commands = [
        e["data"] for e in events(result) if e["type"] == "user/message" and e["data"]["source"]["kind"] == "command"
    ]
    assert [m["content"][0]["text"] for m in commands] == ["/compact keep where the API lives", "/compact"]
    assert kinds(result, "compaction_update", "compaction_summary_chunk") == []
    cards = [u for u in updates(result) if u.get("toolCallId", "").startswith("compaction-")]
    assert [(c["sessionUpdate"], c["status"]) for c in cards] == [
        ("tool_call", "in_progress"),
        ("tool_call_update", "completed"),
    ] * 2
    assert (cards[0]["title"], cards[0]["kind"]) == (texts.CARD_TITLE, "think")
    assert updates(result)[-1] == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": texts.repeated(2)},
    }


def test_an_overflow_compacts_once_and_retries_a_second_overflow_fails_the_turn(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "compaction-overflow")
    assert result.failures == []
    assert [(c["turn"], c["trigger"]) for c in compactions(result)] == [(2, "overflow"), (3, "overflow")]
    turn_ends = [e["data"]["reason"] for e in events(result) if e["type"] == "turn/end"]
    assert [r["kind"] for r in turn_ends] == ["completed", "completed", "error", "error"]
    assert turn_ends[2]["code"] == "CONTEXT_OVERFLOW"
    # The failed call's step, the summary's, the retry's (which overflowed again in turn 3).
    assert [(e["data"]["turn"], e["data"]["step"]) for e in events(result) if e["type"] == "step/start"][1:7] == [
        (2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (3, 3)
    ]  # fmt: skip
    statuses = [u["status"] for u in updates(result) if u["sessionUpdate"] == "compaction_update"]
    assert statuses == ["in_progress", "completed", "in_progress", "completed", "in_progress", "failed"]
    assert turn_ends[3]["message"] == "simulated server error (HTTP 500)"


def test_a_cancelled_compaction_leaves_the_history_as_it_was(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "compaction-cancel")
    assert result.failures == []
    statuses = [u["status"] for u in updates(result) if u["sessionUpdate"] == "compaction_update"]
    assert statuses == ["in_progress", "cancelled", "in_progress", "completed"]
    # The next turn compacted again: the cancelled one had changed nothing.
    assert [c["turn"] for c in compactions(result)] == [3]
    assert compaction_steps(result) == [(2, 1), (3, 1)]


def test_a_loaded_session_replays_its_compactions_where_they_happened(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "compaction-load")
    assert result.failures == []
    shown = kinds(result, "user_message_chunk", "compaction_update", "agent_message_chunk")
    first = shown.index("compaction_update")
    assert shown[first - 1] == "user_message_chunk"  # right after the /compact that made it
    assert shown.count("compaction_update") == 4  # two compactions, each started and completed
    assert texts.repeated(2) in json.dumps(updates(result))


def test_a_forked_child_compacts_its_seed_the_same_way(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "compaction-child")
    assert result.failures == []
    [compaction] = compactions(result, "s1/call_fork")
    assert compaction["trigger"] == "overflow"
    assert compactions(result) == []  # the parent's history is untouched
    assert kinds(result, "compaction_update") == []  # a child's compaction stays in its own log
    answer = next(u for u in updates(result) if u.get("toolCallId") == "call_fork" and u.get("status") == "completed")
    assert answer["content"][0]["content"]["text"] == "make check"
