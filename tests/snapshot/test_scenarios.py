"""The project's own scenarios (fixtures/<name>/), replayed through the real server and held
against their snapshots (snapshots/snapshot/test_scenarios/)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from acp_agent.snapshot.normalize import normalize_run
from acp_agent.snapshot.result import RunResult
from tests.paths import FIXTURES
from tests.runs import ScenarioRuns
from tests.snapshot.scenarios import RUNS, SCENARIOS, run_id

Run = Callable[[Path], RunResult]


def events(result: RunResult, route: str = "s1") -> list[dict]:
    return result.logs[route][1:]


@pytest.fixture(scope="module", autouse=True)
def prefetched(request: pytest.FixtureRequest, scenario_run: ScenarioRuns) -> None:
    """Runs what this module's selected scenario tests read, four servers at a time, before the
    first of them (those the conformance checks read are run already)."""
    runs = [
        (FIXTURES / item.callspec.params["name"], item.callspec.params["child_sessions"])
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.module is request.module and item.originalname == "test_scenario"
    ]
    scenario_run.prefetch(runs, 4)


@pytest.mark.parametrize(("name", "child_sessions"), RUNS, ids=[run_id(*run) for run in RUNS])
def test_scenario(
    name: str, child_sessions: bool, scenario_run: ScenarioRuns, snapshot_file: SnapshotAssertion
) -> None:
    result = scenario_run(FIXTURES / name, child_sessions)
    assert result.failures == []
    assert normalize_run(result).text() == snapshot_file


def test_the_expected_scenarios_exist() -> None:
    assert set(SCENARIOS) >= {
        "handshake", "text-turn", "multi-turn", "tool-call-turn", "workspace-edit",
        "provider-error", "cancel", "invalid-params", "garbage-input", "subagent-spawn",
        "fork-recall", "two-sequential-children", "spawn-then-fork", "concurrent-children", "grandchild",
        "depth-rejected", "structured-output", "structured-missing", "child-model-fails",
        "fork-fails-before-output", "cancel-two-children", "delegation", "load-session",
        "client-fs", "client-terminal", "slash-commands", "slash-commands-load", "project-instructions",
        "instructions-cut", "prompt-queue", "embedded-context", "images", "thought-levels",
        "compaction-auto", "compaction-command", "compaction-overflow", "compaction-cancel",
        "compaction-load", "compaction-child", "background-wakes-parent", "background-second-prompt",
        "background-report", "background-message", "background-message-busy", "background-stop",
        "background-close-load", "background-interrupted-load", "hooks", "session-delete", "plan-operations",
        "session-cost", "ask-user-dismissed", "ask-user-cancelled", "two-roots", "session-titles", "fork-load",
        "steering",
        "acp-child-permission", "acp-child-crash", "acp-child-background",
        "skills", "project-trust", "nested-instructions", "coding-guards",
    }  # fmt: skip


def test_workspace_edit_changes_the_file_in_the_run_cwd(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "workspace-edit")
    assert (result.cwd / "notes.txt").read_text() == "title: release notes\nstatus: final\n"
    # The fixture's own workspace is a template the run copied, never touched.
    assert (FIXTURES / "workspace-edit" / "workspace" / "notes.txt").read_text().endswith("status: draft\n")


def test_two_roots_edits_a_file_in_each_root_of_the_run(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "two-roots")
    library = result.cwd.parent / "roots" / "textkit" / "textkit.py"  # the extra root, beside the cwd
    assert library.read_text().startswith("def yell(text):")
    assert (result.cwd / "main.py").read_text().startswith("from textkit import yell")
    roots = [e["data"]["directories"] for e in events(result) if e["type"] == "session/roots"]
    assert roots == [[str(library.parent)]]
    assert (FIXTURES / "two-roots" / "roots" / "textkit" / "textkit.py").read_text().startswith("def shout")


def test_multi_turn_keeps_both_turns_in_one_session(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "multi-turn")
    assert list(result.logs) == ["s1"]
    messages = [e["data"]["content"][0]["text"] for e in events(result) if e["type"] == "user/message"]
    assert messages[0].startswith("Remember this for later") and messages[1].startswith("What is the project codeword")
    assert [e["data"]["turn"] for e in events(result) if e["type"] == "turn/end"] == [1, 2]


def test_cancel_interrupts_the_message_and_aborts_the_turn(scenario_run: Run) -> None:
    log = events(scenario_run(FIXTURES / "cancel"))
    first_turn = [e for e in log if e["data"].get("turn") == 1]
    message = next(e for e in first_turn if e["type"] == "assistant/message")
    assert message["data"]["interrupted"] is True
    assert first_turn[-1]["type"] == "turn/end" and first_turn[-1]["data"]["reason"]["kind"] == "aborted"
    assert log[-1]["data"]["reason"] == {"kind": "completed"}  # the session still answers afterwards


def test_provider_error_ends_the_turn_with_the_error(scenario_run: Run) -> None:
    end = events(scenario_run(FIXTURES / "provider-error"))[-1]
    assert end["data"]["reason"] == {
        "kind": "error", "step": 1, "message": "simulated provider error (HTTP 401)", "code": "AUTH"
    }  # fmt: skip


def test_load_session_replays_the_stored_turn_then_continues_it(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "load-session")
    frames = [json.loads(line) for line in result.stdout]
    loaded = next(
        i for i, f in enumerate(frames) if "modes" in (f.get("result") or {}) and isinstance(f.get("id"), int)
    )
    replayed = [f["params"]["update"] for f in frames[:loaded] if f.get("method") == "session/update"]
    assert replayed[0] == {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "text", "text": "What is in this workspace? Have a helper count the files."},
    }
    assert [u["toolCallId"] for u in replayed if u["sessionUpdate"] == "tool_call"] == [
        "call_ls", "call_count", "s1/call_count/call_wc",
    ]  # fmt: skip
    assert [e["data"]["turn"] for e in events(result) if e["type"] == "turn/end"] == [1, 2, 3]
    assert list(result.logs) == ["s1", "s1/call_count"]
