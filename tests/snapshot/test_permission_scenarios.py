"""What the approval, mode and model scenarios (fixtures/<name>/, replayed through the real server)
must show beyond their snapshots: the facts a reader checks, asserted one by one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.permissions import texts
from acp_agent.snapshot.frames import is_response, session_update
from acp_agent.snapshot.runner import RunResult
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]
SCENARIOS = ("permission-ask", "permission-cancel", "permission-child", "plan-mode", "plan-mode-child", "model-select", "mode-survives-load")


def run(scenario_run: Run, name: str) -> RunResult:
    result = scenario_run(FIXTURES / name)
    assert result.failures == []
    return result


def frames(result: RunResult) -> list[Any]:
    return [json.loads(line) for line in result.stdout]


def asked(result: RunResult) -> list[dict[str, Any]]:
    """The params of every permission request, in order."""
    return [f["params"] for f in frames(result) if f.get("method") == "session/request_permission"]


def events(result: RunResult, route: str = "s1", kind: str | None = None) -> list[dict[str, Any]]:
    return [e for e in result.logs[route][1:] if kind is None or e["type"] == kind]


def outcomes(result: RunResult, route: str = "s1") -> dict[str, str | None]:
    """Each call's error code (None: it succeeded), by call id."""
    return {e["data"]["callId"]: (e["data"].get("error") or {}).get("code") for e in events(result, route, "tool/result")}


def stop_reasons(result: RunResult) -> list[Any]:
    return [(f.get("result") or {}).get("stopReason") for f in frames(result) if is_response(f) and "stopReason" in (f.get("result") or {})]


def test_the_scenarios_exist() -> None:
    for name in SCENARIOS:
        assert (FIXTURES / name / "input.json").is_file() and (FIXTURES / name / "session.jsonl").is_file()


def test_ask_allow_once_reject_once_then_allow_always(scenario_run: Run) -> None:
    result = run(scenario_run, "permission-ask")
    assert [a["toolCall"]["toolCallId"] for a in asked(result)] == ["call_cat", "call_edit", "call_lines"]  # not call_words
    assert [o["kind"] for o in asked(result)[0]["options"]] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert outcomes(result) == {"call_cat": None, "call_read": None, "call_edit": "declined", "call_lines": None, "call_words": None}
    assert (result.cwd / "notes.txt").read_text() == "title: release notes\nstatus: draft\n"  # the edit never ran
    assert [e["data"] for e in events(result, kind="permission/grant")] == [{"tool": "bash", "decision": "allow", "callId": "call_lines"}]


def test_a_cancelled_answer_stops_the_turn_and_the_session_goes_on(scenario_run: Run) -> None:
    result = run(scenario_run, "permission-cancel")
    assert stop_reasons(result) == ["cancelled", "end_turn"]
    ends = [e["data"]["reason"] for e in events(result, kind="turn/end")]
    assert ends == [{"kind": "aborted", "reason": texts.CANCELLED}, {"kind": "completed"}]
    assert outcomes(result) == {"call_clean": "cancelled"}


def test_a_childs_request_goes_to_the_top_level_session_and_its_always_answer_holds_there(scenario_run: Run) -> None:
    result = run(scenario_run, "permission-child")
    [request] = asked(result)
    session = frames(result)[1]["result"]["sessionId"]
    assert request["sessionId"] == session
    assert request["toolCall"]["toolCallId"] == "s1/call_helper/call_uname"
    assert request["toolCall"]["_meta"] == {
        "acpAgent": {"route": "s1/call_helper", "parentToolCallId": "call_helper"},
        "claudeCode": {"parentToolUseId": "call_helper"},
    }
    grants = [e["data"] for e in events(result, kind="permission/grant")]
    assert grants == [{"tool": "bash", "decision": "allow", "route": "s1/call_helper", "callId": "call_uname"}]
    assert outcomes(result) == {"call_helper": None, "call_machine": None}  # the parent's bash ran unasked


def test_plan_refuses_without_asking_and_auto_edits_without_asking(scenario_run: Run) -> None:
    result = run(scenario_run, "plan-mode")
    assert outcomes(result) == {"call_read": None, "call_run": "plan_mode", "call_fix": None, "call_check": None}
    assert [a["toolCall"]["toolCallId"] for a in asked(result)] == ["call_check"]  # auto still asks for bash
    updates = [u for f in frames(result) if (u := session_update(f)) is not None]
    assert [u["currentModeId"] for u in updates if u["sessionUpdate"] == "current_mode_update"] == ["plan", "auto"]
    assert [e["data"]["modeId"] for e in events(result, kind="session/mode")] == ["plan", "auto"]
    assert (result.cwd / "greet.sh").read_text() == 'name=world\necho "Hello, $name"\n'


def test_a_child_of_a_plan_session_starts_in_plan_and_cannot_run_bash(scenario_run: Run) -> None:
    result = run(scenario_run, "plan-mode-child")
    parent_id = result.logs["s1"][0]["id"]
    first = events(result, "s1/call_helper")[0]
    assert first == {"type": "session/mode", "seq": 0, "time": first["time"], "data": {"modeId": "plan", "source": {"kind": "inherited", "session": parent_id}}}
    assert outcomes(result, "s1/call_helper") == {"call_run": "plan_mode"}
    assert asked(result) == []


def test_the_next_model_call_uses_the_chosen_model(scenario_run: Run) -> None:
    result = run(scenario_run, "model-select")
    messages = [b["text"] for e in events(result, kind="assistant/message") for b in e["data"]["content"]]
    assert messages == ["This answer came from replay.", "This answer came from replay-alt."]
    assert [e["data"] for e in events(result, kind="session/config")] == [{"configId": "model", "value": "replay-alt"}]
    errors = [f["error"]["code"] for f in frames(result) if "error" in f]
    assert errors == [-32602, -32602]


def test_a_loaded_session_keeps_its_mode_and_its_model(scenario_run: Run) -> None:
    result = run(scenario_run, "mode-survives-load")
    [loaded] = [f["result"] for f in frames(result) if "modes" in (f.get("result") or {})]
    assert loaded["modes"]["currentModeId"] == "plan"
    assert [(o["id"], o["currentValue"]) for o in loaded["configOptions"]] == [
        ("mode", "plan"), ("model", "replay-alt"), ("thought_level", "minimal")
    ]
    assert outcomes(result) == {"call_run": "plan_mode"} and asked(result) == []
    assert events(result, kind="assistant/message")[-1]["data"]["content"][0]["text"].endswith("(Answered by replay-alt.)")
