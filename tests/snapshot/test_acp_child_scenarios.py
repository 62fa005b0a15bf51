"""The ACP child scenarios (fixtures/acp-child-*/): an `acp` provider whose child is this server
started again in the run's composition (or, for the crash, a small agent that dies), replayed
across the process boundary from the scenario's fixtures, one route per agent; and `record`
writing the child process's log as the fixture of its route. The facts a reader checks in their
snapshots, asserted one by one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acp_agent.snapshot.cli import main
from acp_agent.snapshot.frames import is_response
from acp_agent.subagents import texts
from tests.paths import FIXTURES
from tests.snapshot.test_subagent_scenarios import Run, events, frames, result_of, run, text_of, turn_ends


def test_the_childs_permission_request_reaches_the_user_and_its_command_runs(scenario_run: Run) -> None:
    result = run(scenario_run, "acp-child-permission")
    # Three agents, two processes: the parent, the child's stand-in, and the child's own session,
    # routed under the stand-in's (its log replayed its own model calls).
    assert list(result.logs) == ["s1", "s1/call_second", "s1/call_second/s1"]
    child = result.logs["s1/call_second/s1"][0]
    assert "parentSession" not in child and child["cwd"] == str(result.cwd)
    asked = [f for f in frames(result) if f.get("method") == "session/request_permission"]
    assert [f["params"]["toolCall"]["toolCallId"] for f in asked] == ["s1/call_second/call_touch"]
    assert (result.cwd / "APPROVED").exists()
    assert text_of(result_of(result, "call_touch", "s1/call_second/s1")) == "(no output)"
    assert text_of(result_of(result, "call_second")) == "Created APPROVED."


def test_a_child_that_crashes_with_its_task_fails_the_call_and_the_parent_goes_on(scenario_run: Run) -> None:
    result = run(scenario_run, "acp-child-crash")
    exited = texts.acp_exited("flaky agent", 4)
    answer = result_of(result, "call_haiku")
    assert answer["isError"] is True
    assert text_of(answer) == "Error: " + texts.run_failed_because(exited)
    assert turn_ends(result, "s1/call_haiku") == [{"kind": "error", "message": exited, "code": "acp_child"}]
    assert turn_ends(result) == [{"kind": "completed"}]
    assert "fake agent: giving up" in result.stderr  # the child's stderr is the server's log


def test_a_background_child_is_messaged_twice_in_one_session_of_the_child(scenario_run: Run) -> None:
    result = run(scenario_run, "acp-child-background")
    # Its first turn waited for the file the user wrote after the first answer: its notice woke
    # the idle parent, whose turn messaged it twice and waited for each answer.
    notices = events(result, kind="subagent/notice")
    assert [(n["data"]["route"], n["data"]["turn"]) for n in notices] == [("s1/call_watch", 1)]
    assert "READY says: build 42 passed." in notices[0]["data"]["text"]
    assert text_of(result_of(result, "call_notes")) == "A faster start-up and a new theme."
    assert text_of(result_of(result, "call_thanks")) == "Goodbye."
    child = events(result, "s1/call_watch/s1", "user/message")
    assert [text_of(m["data"]) for m in child] == [
        "Wait until the file READY exists in the working directory, then say what it says.",
        "Which changes does NOTES.md list?",
        "Thanks, that is all. Say goodbye.",
    ]
    assert turn_ends(result, "s1/call_watch") == [{"kind": "completed"}] * 3
    assert [(f.get("result") or {}).get("stopReason") for f in frames(result) if is_response(f)][2:] == ["end_turn"]


def test_record_writes_the_acp_childs_log_under_its_route(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "acp-child-permission"
    shutil.copytree(FIXTURES / scenario.name, scenario, ignore=shutil.ignore_patterns("session*.jsonl"))
    assert main(["record", str(scenario)]) == 0
    assert capsys.readouterr().err.endswith(
        "session.jsonl (s1), session.1.jsonl (s1/call_second), session.2.jsonl (s1/call_second/s1)\n"
    )
    header, *logged = [json.loads(line) for line in (scenario / "session.2.jsonl").read_text().splitlines()]
    assert (header["route"], header["cwd"]) == ("s1/call_second/s1", "{{cwd}}")
    assert [e["data"]["name"] for e in logged if e["type"] == "tool/call"] == ["bash"]
    assert main(["run", str(scenario)]) == 0  # and it replays
