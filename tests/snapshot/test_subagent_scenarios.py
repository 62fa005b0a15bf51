"""What the subagent scenarios (fixtures/<name>/, replayed through the real server) must show,
beyond their snapshots: the facts a reader checks in the snapshot, asserted one by one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.snapshot.frames import child_route, is_response, session_update
from acp_agent.snapshot.result import RunResult
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]


def run(scenario_run: Run, name: str) -> RunResult:
    result = scenario_run(FIXTURES / name)
    assert result.failures == []
    return result


def events(result: RunResult, route: str = "s1", kind: str | None = None) -> list[dict[str, Any]]:
    """A log's events (the header left out), after its fork seed, maybe of one type only."""
    header, *rest = result.logs[route]
    own = rest[header.get("seedLength") or 0 :]
    return [e for e in own if kind is None or e["type"] == kind]


def result_of(result: RunResult, call_id: str, route: str = "s1") -> dict[str, Any]:
    """The `tool/result` data of a call in a log."""
    return next(e["data"] for e in events(result, route, "tool/result") if e["data"]["callId"] == call_id)


def text_of(data: dict[str, Any]) -> str:
    return "".join(block["text"] for block in data["content"])


def frames(result: RunResult) -> list[Any]:
    return [json.loads(line) for line in result.stdout]


def updates(result: RunResult) -> list[dict[str, Any]]:
    return [u for f in frames(result) if (u := session_update(f)) is not None]


def stop_reasons(result: RunResult) -> list[Any]:
    return [(f.get("result") or {}).get("stopReason") for f in frames(result) if is_response(f)][2:]


def turn_ends(result: RunResult, route: str = "s1") -> list[dict[str, Any]]:
    return [e["data"]["reason"] for e in events(result, route, "turn/end")]


def test_a_forked_child_recalls_a_fact_of_an_earlier_turn(scenario_run: Run) -> None:
    result = run(scenario_run, "fork-recall")
    parent, child = result.logs["s1"][1:], result.logs["s1/call_fork"]
    first_turn = parent[: 1 + next(i for i, e in enumerate(parent) if e["type"] == "turn/end")]
    # The seed is the parent's completed first turn, never the open turn that forks.
    assert child[0]["seedLength"] == len(first_turn)
    assert [(e["type"], e["data"]) for e in child[1 : 1 + len(first_turn)]] == [
        (e["type"], e["data"]) for e in first_turn
    ]
    assert "HELIOTROPE" in text_of(first_turn[1]["data"])
    assert [text_of(e["data"]) for e in events(result, "s1/call_fork", "user/message")] == [
        "What is the launch codeword I told you earlier? Reply with the word only."
    ]
    assert text_of(result_of(result, "call_fork")) == "HELIOTROPE"
    assert stop_reasons(result) == ["end_turn", "end_turn"]


def test_two_children_in_two_steps_run_one_after_the_other(scenario_run: Run) -> None:
    result = run(scenario_run, "two-sequential-children")
    calls = events(result, kind="tool/call")
    assert [(c["data"]["callId"], c["data"]["step"]) for c in calls] == [("call_fruit", 1), ("call_plural", 2)]
    assert text_of(result_of(result, "call_fruit")) == "mango"
    # The second child is asked with what the first one answered.
    assert "mango" in text_of(events(result, "s1/call_plural", "user/message")[0]["data"])
    assert text_of(result_of(result, "call_plural")) == "mangoes"
    assert [result.logs[r][0]["delegationDepth"] for r in ("s1/call_fruit", "s1/call_plural")] == [1, 1]


def test_a_fork_after_a_spawn_inherits_the_spawned_childs_result(scenario_run: Run) -> None:
    result = run(scenario_run, "spawn-then-fork")
    assert "seedLength" not in result.logs["s1/call_pick"][0]
    seed = result.logs["s1/call_recall"][1 : 1 + result.logs["s1/call_recall"][0]["seedLength"]]
    assert [e["data"]["callId"] for e in seed if e["type"] == "tool/result"] == ["call_pick"]
    assert text_of(next(e["data"] for e in seed if e["type"] == "tool/result")) == "otter"
    assert text_of(result_of(result, "call_recall")) == "OTTER"


def test_concurrent_children_answer_apart_and_the_bash_call_shows_its_child(scenario_run: Run) -> None:
    result = run(scenario_run, "concurrent-children")
    parent = events(result)
    kinds = [(e["type"], e["data"].get("callId")) for e in parent if e["type"] in ("tool/call", "tool/result")]
    # Both calls of one step start before either result: they ran together; results in model order.
    assert kinds == [
        ("tool/call", "call_count"), ("tool/call", "call_colour"),
        ("tool/result", "call_count"), ("tool/result", "call_colour"),
    ]  # fmt: skip
    assert {e["data"]["step"] for e in parent if e["type"] == "tool/call"} == {1}
    assert text_of(result_of(result, "call_count")) == "3"
    assert text_of(result_of(result, "call_colour")) == "Blue"
    bash = [u for u in updates(result) if u.get("toolCallId") == "s1/call_count/call_wc"]
    assert [(u["sessionUpdate"], u["status"]) for u in bash] == [
        ("tool_call", "in_progress"),
        ("tool_call_update", "completed"),
    ]
    assert all(
        u["_meta"]
        == {
            "acpAgent": {"route": "s1/call_count", "parentToolCallId": "call_count"},
            "claudeCode": {"parentToolUseId": "call_count"},
        }
        for u in bash
    )
    assert bash[0]["rawInput"]["command"] == "wc -l < notes.txt"
    # The other child ran no tool: nothing of it reaches the wire.
    assert not [u for u in updates(result) if "s1/call_colour/" in u.get("toolCallId", "")]


def test_a_child_may_have_a_child_of_its_own(scenario_run: Run) -> None:
    result = run(scenario_run, "grandchild")
    child, grandchild = result.logs["s1/call_child"][0], result.logs["s1/call_child/call_grandchild"][0]
    assert (child["delegationDepth"], grandchild["delegationDepth"]) == (1, 2)
    assert grandchild["parentSession"] == child["id"]
    echo = next(u for u in updates(result) if u.get("toolCallId") == "s1/call_child/call_grandchild/call_echo")
    assert echo["_meta"] == {
        "acpAgent": {"route": "s1/call_child/call_grandchild", "parentToolCallId": "s1/call_child/call_grandchild"},
        "claudeCode": {"parentToolUseId": "s1/call_child/call_grandchild"},
    }
    # The child's answer grows on the card of its parent's call (at each text block's end).
    cards = [u for u in updates(result) if u.get("toolCallId") == "call_child" and "status" not in u]
    assert [u["content"][-1]["content"]["text"] for u in cards] == ["My helper printed 1969-07-20."]
    assert text_of(result_of(result, "call_grandchild", "s1/call_child")) == "1969-07-20"
    assert text_of(result_of(result, "call_child")) == "My helper printed 1969-07-20."


def test_a_third_level_is_refused_and_the_run_goes_on(scenario_run: Run) -> None:
    result = run(scenario_run, "depth-rejected")
    refused = result_of(result, "call_level3", "s1/call_level1/call_level2")
    assert text_of(refused) == "Error: subagent depth 3 exceeds maxDepth 2"
    assert refused["isError"] is True and refused["error"]["code"] == "subagent_not_started"
    assert list(result.logs) == ["s1", "s1/call_level1", "s1/call_level1/call_level2"]  # no third level
    for route in result.logs:
        assert turn_ends(result, route) == [{"kind": "completed"}]
    assert stop_reasons(result) == ["end_turn"]


def test_a_structured_child_gives_the_parent_its_json_value(scenario_run: Run) -> None:
    result = run(scenario_run, "structured-output")
    answer = result_of(result, "call_city")
    assert answer["isError"] is False
    assert json.loads(text_of(answer)) == {"city": "Paris", "population": 2102650}
    child = events(result, "s1/call_city")
    assert text_of(result_of(result, "call_so", "s1/call_city")) == "Structured output recorded."
    assert len([e for e in child if e["type"] == "step/start"]) == 1  # the recorded value ends the turn
    assert child[-1]["data"]["reason"] == {"kind": "completed"}


def test_a_structured_child_that_answers_in_text_fails_with_its_partial_output(scenario_run: Run) -> None:
    result = run(scenario_run, "structured-missing")
    answer = result_of(result, "call_city")
    assert answer["isError"] is True
    assert text_of(answer) == (
        "Error: subagent run failed\nPartial output before the run ended:\nParis, with about 2.1 million inhabitants."
    )
    assert turn_ends(result) == [{"kind": "completed"}]
    assert stop_reasons(result) == ["end_turn"]


def test_a_child_whose_model_throws_gives_an_error_result(scenario_run: Run) -> None:
    result = run(scenario_run, "child-model-fails")
    assert turn_ends(result, "s1/call_summary") == [
        {"kind": "error", "step": 1, "message": "simulated provider error (HTTP 500)", "code": "SERVER"}
    ]
    answer = result_of(result, "call_summary")
    assert answer["isError"] is True
    assert text_of(answer) == "Error: subagent run failed\nPartial output before the run ended:\nGutenberg built"
    assert turn_ends(result) == [{"kind": "completed"}]
    assert stop_reasons(result) == ["end_turn"]


def test_a_fork_that_fails_before_output_reports_no_partial_output(scenario_run: Run) -> None:
    result = run(scenario_run, "fork-fails-before-output")
    seed = result.logs["s1/call_fork"][1 : 1 + result.logs["s1/call_fork"][0]["seedLength"]]
    assert any(e["type"] == "assistant/message" and "SEEDED_PARENT_MESSAGE" in str(e["data"]) for e in seed)
    assert events(result, "s1/call_fork", "assistant/message") == []  # it said nothing of its own
    answer = result_of(result, "call_fork")
    assert answer["isError"] is True
    assert text_of(answer) == "Error: subagent run failed"  # never the seeded parent's last message
    assert turn_ends(result) == [{"kind": "completed"}, {"kind": "completed"}]


def test_cancelling_the_parent_aborts_both_children_and_nothing_runs_after(scenario_run: Run) -> None:
    result = run(scenario_run, "cancel-two-children")
    assert stop_reasons(result) == ["cancelled", "end_turn"]
    for route in ("s1/call_wait_a", "s1/call_wait_b"):
        child = events(result, route)
        assert child[-1]["type"] == "turn/end"  # nothing after it
        assert child[-1]["data"]["reason"] == {"kind": "aborted", "reason": "the parent's turn was cancelled"}
        bash = result_of(result, "call_sleep", route)
        assert bash["isError"] is True and bash["error"]["code"] == "cancelled"
        assert len([e for e in child if e["type"] == "step/start"]) == 1  # no model call after the cancel
    parent_results = [e["data"] for e in events(result, kind="tool/result")]
    assert [(r["callId"], r["isError"]) for r in parent_results] == [("call_wait_a", True), ("call_wait_b", True)]
    assert turn_ends(result)[0] == {"kind": "aborted", "reason": "cancelled by the client"}
    # Once the prompt answered `cancelled`, no child shows anything on the wire.
    all_frames = frames(result)
    cancelled = next(
        i for i, f in enumerate(all_frames) if is_response(f) and f.get("result") == {"stopReason": "cancelled"}
    )
    assert [child_route(f) for f in all_frames[cancelled:] if child_route(f) is not None] == []
    assert {child_route(f) for f in all_frames[:cancelled]} - {None} == {"s1/call_wait_a", "s1/call_wait_b"}


# -- as child sessions (the client advertised `subagents`) -------------------------------------


def on_session(result: RunResult, session_id: str) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in frames(result)
        if session_update(f) is not None and f["params"]["sessionId"] == session_id
    ]


def test_a_child_session_is_announced_told_its_task_shows_its_work_and_ends_idle(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "grandchild", True)  # type: ignore[call-arg]
    assert result.failures == []
    top, child, grandchild = (result.logs[r][0]["id"] for r in ("s1", "s1/call_child", "s1/call_child/call_grandchild"))
    kinds = [u["sessionUpdate"] for u in on_session(result, grandchild)]
    # Its task (no user_message_chunk), its tool call, its text, its answer going back.
    assert kinds == [
        "session_message", "usage_update", "tool_call", "tool_call_update", "agent_message_chunk", "usage_update",
        "session_message", "session_message_chunk",
    ]  # fmt: skip
    # Announced on its immediate parent's session (the child's), before any of its traffic.
    announced = next(
        i for i, f in enumerate(frames(result)) if (session_update(f) or {}).get("sessionId") == grandchild
    )
    first_own = next(i for i, f in enumerate(frames(result)) if (f.get("params") or {}).get("sessionId") == grandchild)
    assert announced < first_own and frames(result)[announced]["params"]["sessionId"] == child
    states = [u["state"] for u in on_session(result, child) if u["sessionUpdate"] == "subagent_update"]
    assert [s["state"] for s in states] == ["running", "idle"]
    assert states[-1]["stopReason"] == "end_turn"
    # Every child's final state comes before the parent's prompt answer.
    answer = next(i for i, f in enumerate(frames(result)) if is_response(f) and "stopReason" in (f.get("result") or {}))
    last_end = max(
        i for i, f in enumerate(frames(result)) if ((session_update(f) or {}).get("state") or {}).get("state") == "idle"
    )
    assert last_end < answer
    # Each child is announced on its immediate parent's session only.
    assert {u.get("sessionId") for u in on_session(result, top) if u["sessionUpdate"] == "subagent_update"} == {child}
    assert {u.get("sessionId") for u in on_session(result, child) if u["sessionUpdate"] == "subagent_update"} == {
        grandchild
    }


def test_cancelling_one_child_by_its_session_id_leaves_the_other_and_the_parent_running(scenario_run: Run) -> None:
    result = run(scenario_run, "cancel-one-child")
    assert turn_ends(result, "s1/call_slow") == [{"kind": "aborted", "reason": "cancelled by the client"}]
    assert turn_ends(result, "s1/call_count") == [{"kind": "completed"}]
    assert text_of(result_of(result, "call_slow")) == "Error: subagent run was cancelled"
    assert text_of(result_of(result, "call_count")) == "3"
    assert turn_ends(result) == [{"kind": "completed"}, {"kind": "completed"}]
    assert stop_reasons(result)[0] == "end_turn"
    slow = result.logs["s1/call_slow"][0]["id"]
    refused = [f["error"] for f in frames(result) if is_response(f) and "error" in f]
    assert [e["code"] for e in refused] == [-32602] * 5
    assert (
        refused[0]["message"] == f"Invalid params: session {slow} is a subagent session; it accepts only session/cancel"
    )
    ends = [
        u["state"] for u in updates(result) if u["sessionUpdate"] == "subagent_update" and u["state"]["state"] == "idle"
    ]
    assert sorted(e["stopReason"] for e in ends) == ["cancelled", "end_turn"]


def test_a_child_waiting_for_approval_requires_action_then_runs_again(scenario_run: Run) -> None:
    result = run(scenario_run, "child-approval")
    child = result.logs["s1/call_helper"][0]["id"]
    asked = next(f for f in frames(result) if f.get("method") == "session/request_permission")
    assert asked["params"]["sessionId"] == child and asked["params"]["toolCall"]["toolCallId"] == "call_rm"
    states = [u["state"]["state"] for u in updates(result) if u["sessionUpdate"] == "subagent_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    assert (result.cwd / "scratch.txt").exists()  # rejected: nothing ran


def test_a_loaded_session_replays_its_child_sessions_without_a_fork_seed(scenario_run: Run) -> None:
    live = scenario_run(FIXTURES / "fork-recall", True)  # type: ignore[call-arg]
    fork = live.logs["s1/call_fork"][0]["id"]
    shown = on_session(live, fork)
    assert shown[0]["sessionUpdate"] == "session_message"  # its task first: nothing of the seed
    said = "".join(u["content"]["text"] for u in shown if u["sessionUpdate"] == "agent_message_chunk")
    assert said == "HELIOTROPE"  # its own answer, not the seeded turn's
    assert "user_message_chunk" not in {u["sessionUpdate"] for u in shown}
    loaded = scenario_run(FIXTURES / "load-session", True)  # type: ignore[call-arg]
    kinds = [
        u["sessionUpdate"] for u in updates(loaded) if u["sessionUpdate"].startswith(("subagent", "session_message"))
    ]
    assert kinds[:2] == ["subagent_update", "session_message"] and kinds[-1] == "subagent_update"


def triggers(result: RunResult, route: str = "s1") -> list[str]:
    return [e["data"]["trigger"]["source"]["kind"] for e in events(result, route, "turn/start")]


def test_a_background_child_works_while_the_parent_answers_a_second_prompt(scenario_run: Run) -> None:
    result = run(scenario_run, "background-second-prompt")
    child = result.logs["s1/call_review"][0]
    assert text_of(result_of(result, "call_review")).startswith(
        f"Started background agent {child['id']} (Review notes.txt)."
    )
    assert triggers(result) == ["user", "user", "subagent"]  # the notice woke a third turn
    [notice] = events(result, kind="subagent/notice")
    assert notice["data"]["route"] == "s1/call_review" and notice["data"]["kind"] == "settled"
    assert stop_reasons(result) == ["end_turn", "end_turn"]  # the woken turn answers no prompt


def test_a_report_and_the_end_each_wake_the_parent(scenario_run: Run) -> None:
    result = run(scenario_run, "background-report")
    assert [e["data"]["kind"] for e in events(result, kind="subagent/notice")] == ["report", "settled"]
    assert triggers(result) == ["user", "subagent", "subagent"]
    assert text_of(result_of(result, "call_report", "s1/call_count")) == "Reported."


def test_a_message_with_wait_answers_with_the_childs_next_turn(scenario_run: Run) -> None:
    result = run(scenario_run, "background-message")
    assert text_of(result_of(result, "call_plural")) == "mangoes"
    assert len(events(result, kind="subagent/notice")) == 1  # the awaited turn sends none
    assert turn_ends(result, "s1/call_pick") == [{"kind": "completed"}, {"kind": "completed"}]
    assert "[completed] Pick a fruit; last activity: said 'mangoes'" in text_of(result_of(result, "call_list"))


def test_a_message_to_a_busy_child_is_its_next_turn(scenario_run: Run) -> None:
    result = run(scenario_run, "background-message-busy")
    assert text_of(result_of(result, "call_more")).startswith("Message queued:")
    messages = [text_of(e["data"]) for e in events(result, "s1/call_count", "user/message")]
    assert messages[1] == "Then tell me the last line of notes.txt."
    assert triggers(result) == ["user", "subagent", "subagent"]


def test_a_stopped_child_tells_the_parent_at_its_next_call_without_waking_it(scenario_run: Run) -> None:
    result = run(scenario_run, "background-stop")
    assert turn_ends(result, "s1/call_slow") == [{"kind": "aborted", "reason": "stopped by the agent that started it"}]
    [notice] = events(result, kind="subagent/notice")
    assert notice["data"]["text"].endswith("ended:\nError: subagent run was cancelled")
    assert triggers(result) == ["user"]


def test_closing_the_thread_ends_its_background_child_and_a_load_shows_it(scenario_run: Run) -> None:
    result = run(scenario_run, "background-close-load")
    assert turn_ends(result, "s1/call_slow") == [{"kind": "disposed"}]
    interrupted = run(scenario_run, "background-interrupted-load")
    card = [u for u in updates(interrupted) if u.get("toolCallId") == "s1/call_slow/call_sleep"]
    assert card[-1]["status"] == "failed"
