"""What the approval, mode and model scenarios (fixtures/<name>/, replayed through the real server)
must show beyond their snapshots: the facts a reader checks, asserted one by one."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.permissions import texts
from acp_agent.snapshot.frames import is_response, session_update
from acp_agent.snapshot.result import RunResult
from acp_agent.tools.scratch import PREFIX as SCRATCH_PREFIX
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]
SCENARIOS = (
    "sandbox-modes",
    "prefix-rules",
    "permission-ask",
    "permission-cancel",
    "permission-child",
    "plan-mode",
    "plan-mode-child",
    "model-select",
    "mode-survives-load",
    "sandbox-child-escalation",
    "sandbox-none",
    "sandbox-load",
)


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
    return {
        e["data"]["callId"]: (e["data"].get("error") or {}).get("code") for e in events(result, route, "tool/result")
    }


def stop_reasons(result: RunResult) -> list[Any]:
    return [
        (f.get("result") or {}).get("stopReason")
        for f in frames(result)
        if is_response(f) and "stopReason" in (f.get("result") or {})
    ]


def test_the_scenarios_exist() -> None:
    for name in SCENARIOS:
        assert (FIXTURES / name / "input.json").is_file() and (FIXTURES / name / "session.jsonl").is_file()


def test_ask_allow_once_reject_once_then_allow_always(scenario_run: Run) -> None:
    result = run(scenario_run, "permission-ask")
    assert [a["toolCall"]["toolCallId"] for a in asked(result)] == [
        "call_cat",
        "call_edit",
        "call_lines",
    ]  # not call_words
    assert [o["kind"] for o in asked(result)[0]["options"]] == [
        "allow_once", "allow_always", "allow_always", "reject_once", "reject_always", "reject_always"
    ]  # fmt: skip
    assert asked(result)[0]["options"][2]["name"] == "Always allow commands starting with `cat` in this project"
    assert outcomes(result) == {
        "call_cat": None,
        "call_read": None,
        "call_edit": "declined",
        "call_lines": None,
        "call_words": None,
    }
    assert (result.cwd / "notes.txt").read_text() == "title: release notes\nstatus: draft\n"  # the edit never ran
    assert [e["data"] for e in events(result, kind="permission/grant")] == [
        {"tool": "bash", "decision": "allow", "callId": "call_lines"}
    ]


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


def test_plan_runs_commands_read_only_and_auto_edits_and_runs_without_asking(scenario_run: Run) -> None:
    result = run(scenario_run, "plan-mode")
    assert outcomes(result) == {"call_read": None, "call_run": None, "call_fix": None, "call_check": None}
    assert asked(result) == []  # plan explores unasked; auto edits and runs commands sandboxed, unasked
    run_result = [e["data"] for e in events(result, kind="tool/result") if e["data"]["callId"] == "call_run"]
    assert run_result[0]["content"][0]["text"] == "Hello, \n"
    updates = [u for f in frames(result) if (u := session_update(f)) is not None]
    assert [u["currentModeId"] for u in updates if u["sessionUpdate"] == "current_mode_update"] == ["plan", "auto"]
    assert [e["data"]["modeId"] for e in events(result, kind="session/mode")] == ["plan", "auto"]
    assert (result.cwd / "greet.sh").read_text() == 'name=world\necho "Hello, $name"\n'


def test_a_child_of_a_plan_session_starts_in_plan_and_runs_bash_read_only(scenario_run: Run) -> None:
    result = run(scenario_run, "plan-mode-child")
    parent_id = result.logs["s1"][0]["id"]
    first = events(result, "s1/call_helper")[0]
    assert first == {
        "type": "session/mode",
        "seq": 0,
        "time": first["time"],
        "data": {"modeId": "plan", "source": {"kind": "inherited", "session": parent_id}},
    }
    assert outcomes(result, "s1/call_helper") == {"call_run": None}
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
        ("mode", "plan"),
        ("model", "replay-alt"),
        ("thought_level", "minimal"),
    ]
    assert outcomes(result) == {"call_run": None} and asked(result) == []  # read-only, unasked
    assert events(result, kind="assistant/message")[-1]["data"]["content"][0]["text"].endswith(
        "(Answered by replay-alt.)"
    )


def test_each_mode_confines_its_commands_and_an_escalation_asks_once(scenario_run: Run) -> None:
    result = run(scenario_run, "sandbox-modes")
    assert [a["toolCall"]["toolCallId"] for a in asked(result)] == [
        "call_stamp",
        "call_copy",
        "call_escalate",
        "call_escalate_again",
    ]
    assert [o["optionId"] for o in asked(result)[1]["options"]] == [
        "allow_once", "allow_always", "allow_prefix", "reject_once", "reject_always", "reject_prefix"
    ]  # fmt: skip
    assert asked(result)[1]["options"][2]["name"] == "Always allow commands starting with `cp` in this project"
    assert [o["optionId"] for o in asked(result)[2]["options"]] == ["allow_once", "reject_once"]  # an escalation
    assert outcomes(result) == {
        "call_stamp": None, "call_copy": None, "call_escalate": "declined", "call_escalate_again": None,
        "call_check": None, "call_read": None, "call_remove": None,
    }  # fmt: skip
    results = {e["data"]["callId"]: e["data"]["content"][0]["text"] for e in events(result, kind="tool/result")}
    shared = result.cwd.parent / "shared.txt"
    assert f"[sandbox: writing {shared} is not allowed in workspace-write mode" in results["call_copy"]
    assert results["call_check"] == "2026\n"  # the allowed escalation wrote outside the project
    assert "read-only mode" in results["call_read"] and not (result.cwd / "read.log").exists()
    assert results["call_remove"] == "removed\n" and not shared.exists()  # Full access: unconfined, unasked
    replies = [
        e["data"]["text"] for e in events(result, kind="command/reply") if e["data"]["text"].startswith("Sandbox")
    ]
    scratch = os.path.join(tempfile.gettempdir(), SCRATCH_PREFIX)
    assert replies and all(f"Writable: {result.cwd}, {scratch}" in r or f"Writable: {scratch}" in r for r in replies)


def test_a_prefix_rule_is_saved_for_the_project_inherited_by_a_new_thread_and_removed(scenario_run: Run) -> None:
    result = run(scenario_run, "prefix-rules")
    [first, compound] = asked(result)
    assert first["toolCall"]["toolCallId"] == "call_lines"
    assert "allow_prefix" not in [o["optionId"] for o in compound["options"]]  # a compound command saves no rule
    assert outcomes(result) == {"call_lines": None, "call_words": None, "call_both": "declined"}
    assert outcomes(result, "s2") == {"call_bytes": None}  # the new thread inherited the rule: unasked
    assert (result.cwd / "notes.txt").exists()
    assert result.config is not None
    saved = result.config / "permissions.json"
    assert oct(saved.stat().st_mode & 0o777) == "0o600"
    assert json.loads(saved.read_text()) == {"version": 1, "projects": {str(result.cwd): {"allow": []}}}


def test_a_childs_escalation_asks_on_its_thread_even_in_auto(scenario_run: Run) -> None:
    for child_sessions in (False, True):
        result = scenario_run(FIXTURES / "sandbox-child-escalation", child_sessions)  # type: ignore[call-arg]
        assert result.failures == []
        [request] = asked(result)
        child = result.logs["s1/call_helper"][0]["id"]
        top = frames(result)[1]["result"]["sessionId"]
        # With child sessions it asks on the child's own session; without, on the top-level one, as
        # the child's other approvals do.
        assert request["sessionId"] == (child if child_sessions else top)
        assert request["toolCall"]["rawInput"]["escalate"] is True
        assert [o["optionId"] for o in request["options"]] == ["allow_once", "reject_once"]
        assert outcomes(result, "s1/call_helper") == {
            "call_copy": None,
            "call_escalate": None,
        }  # call_copy's exit 1 is a result
        results = {
            e["data"]["callId"]: e["data"]["content"][0]["text"]
            for e in events(result, "s1/call_helper", "tool/result")
        }
        assert "is not allowed in workspace-write mode" in results["call_copy"]  # auto ran it unasked, sandboxed
        assert (result.cwd.parent / "shared.txt").read_text() == "title: notes\nstatus: final\n"
        assert events(result, kind="permission/grant") == []  # a one-shot answer is not logged


def test_without_a_sandbox_confined_modes_refuse_commands_and_say_what_to_do(scenario_run: Run) -> None:
    result = run(scenario_run, "sandbox-none")
    assert asked(result) == []  # refused before anyone is asked
    assert outcomes(result) == {
        "call_tests": "sandbox_unavailable",
        "call_again": "sandbox_unavailable",
        "call_full": None,
    }
    results = {e["data"]["callId"]: e["data"]["content"][0]["text"] for e in events(result, kind="tool/result")}
    for call in ("call_tests", "call_again"):
        assert "the deployment turned the sandbox off (backend: none)" in results[call]
        assert "choose the Full access mode" in results[call] and "install bubblewrap" in results[call]
    assert results["call_full"] == "2 passed\n"  # Full access still runs it


def test_a_loaded_thread_keeps_its_mode_and_grant_inside_the_sandbox_and_escalation_still_asks(
    scenario_run: Run,
) -> None:
    result = run(scenario_run, "sandbox-load")
    [loaded] = [f["result"] for f in frames(result) if "modes" in (f.get("result") or {})]
    assert loaded["modes"]["currentModeId"] == "auto"
    assert [e["data"]["decision"] for e in events(result, kind="permission/grant")] == [
        "allow"
    ]  # the stored "always allow bash"
    [request] = asked(result)  # the escalation only: the grant does not cover it
    assert request["toolCall"]["toolCallId"] == "call_escalate_again"
    assert [o["optionId"] for o in request["options"]] == ["allow_once", "reject_once"]
    new = {e["data"]["callId"]: e["data"] for e in events(result, kind="tool/result")[-2:]}
    assert (
        "is not allowed in workspace-write mode" in new["call_update"]["content"][0]["text"]
    )  # unasked, yet sandboxed
    assert new["call_escalate_again"]["error"]["code"] == "declined"
    assert not (result.cwd.parent / "shared.txt").exists()
