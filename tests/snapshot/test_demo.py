from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.snapshot import demo
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.summary import DIM, RESET
from tests.paths import FIXTURES


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_demo_replays_the_bundled_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert demo.run_demo(out) == 0
    assert out.getvalue().splitlines()[2:] == [
        (
            "> Review notes.txt: at the same time, have one helper count its bullet points "
            "and another suggest a better title."
        ),
        "",
        "  thinking: Two independent tasks, so I will start both helpers in one step.",
        "  subagent call_count: Count the bullet points",
        "    │ bash call_grep: grep -c '^- ' notes.txt [completed]",
        "    │     ```console",
        "    │     2",
        "    │     ```",
        "    └ completed: 2",
        "  subagent call_title: Suggest a better title",
        "    └ completed: Quicker Starts, Parallel Helpers",
        '  agent: notes.txt has 2 bullet points, and a better title would be "Quicker Starts, Parallel Helpers".',
        "  stop reason: end_turn",
        "",
        "> Now fork a helper that knows this conversation and have it draft a one-line changelog entry.",
        "",
        "  thinking: A forked helper inherits what we found, so it can write the entry.",
        "  subagent_fork call_entry: Draft the changelog entry",
        (
            "    └ completed: Quicker Starts, Parallel Helpers: 2 improvements, "
            "a faster start-up and helpers that run at the same time."
        ),
        (
            "  agent: Here is the entry: Quicker Starts, Parallel Helpers: 2 improvements, "
            "a faster start-up and helpers that run at the same time."
        ),
        "  stop reason: end_turn",
        "",
    ]
    assert capsys.readouterr().err == ""


def test_the_bundled_scenario_is_a_real_copy_of_the_fixture() -> None:
    bundled, fixture = demo.demo_dir(), FIXTURES / demo.SCENARIO
    files = sorted(p.relative_to(bundled) for p in bundled.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(fixture) for p in fixture.rglob("*") if p.is_file())
    for name in files:
        assert not (bundled / name).is_symlink()
        assert (bundled / name).read_bytes() == (fixture / name).read_bytes()


def frame(obj: Any) -> str:
    return json.dumps(obj)


def update(kind: str, meta: dict[str, Any] | None = None, **fields: Any) -> str:
    body = {"sessionUpdate": kind, **fields}
    if meta is not None:
        body["_meta"] = {"acpAgent": meta}
    return frame({"method": "session/update", "params": {"update": body}})


def result(text: str) -> list[dict[str, Any]]:
    return [{"type": "content", "content": {"type": "text", "text": text}}]


def fake_run(
    monkeypatch: pytest.MonkeyPatch, stdout: list[str], logs: dict[str, list[Any]], failures: list[str]
) -> None:
    sent = [
        frame({"id": 1, "method": "initialize"}),
        frame({"id": 3, "method": "session/prompt", "params": {"prompt": [{"text": "go"}]}}),
    ]

    async def run(directory: Path, workdir: Path) -> RunResult:
        return RunResult(stdout, "", logs, workdir, sent, 1 if failures else 0, failures)

    monkeypatch.setattr(demo, "run_scenario", run)


def test_thoughts_are_dimmed_on_a_terminal_and_failures_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdout = [
        update("agent_thought_chunk", content={"type": "text", "text": "hm"}),
        update("tool_call", toolCallId="c1", title="false", status="in_progress"),
        update("plan", entries=[]),
        update("tool_call_update", toolCallId="c1", status="failed", content=result("Error: no")),
        update("tool_call_update", toolCallId="unknown", status="failed", content=result("ignored")),
        frame({"id": 3, "error": {"code": -32603, "message": "Internal error: turn failed: x"}}),
        frame({"id": 1, "result": {}}),
    ]
    fake_run(monkeypatch, stdout, {}, ["the server exited with code 1"])
    out = Terminal()
    assert demo.run_demo(out) == 1
    assert out.getvalue().splitlines()[2:] == [
        "> go",
        "",
        f"{DIM}  thinking: hm{RESET}",
        "  tool c1: false [failed]",
        "      Error: no",
        "  error -32603: Internal error: turn failed: x",
        "",
    ]
    assert capsys.readouterr().err == "failure: the server exited with code 1\n"


def test_children_are_nested_under_the_call_that_started_them(monkeypatch: pytest.MonkeyPatch) -> None:
    child = {"route": "s1/a", "parentToolCallId": "a"}
    grandchild = {"route": "s1/a/g", "parentToolCallId": "s1/a/g"}
    stdout = [
        update("agent_message_chunk", content={"type": "text", "text": "On "}),
        update("agent_message_chunk", content={"type": "text", "text": "it."}),
        update("tool_call", toolCallId="a", title="Dig", status="in_progress"),
        update("tool_call", toolCallId="b", title="Idle", status="in_progress"),
        update("tool_call", child, toolCallId="s1/a/g", title="Dig deeper", status="in_progress"),
        update("tool_call", grandchild, toolCallId="s1/a/g/x", title="ls", status="in_progress"),
        update("tool_call_update", grandchild, toolCallId="s1/a/g/x", status="completed", content=result("a.txt")),
        update("tool_call_update", child, toolCallId="s1/a/g", status="completed", content=result("found a.txt")),
        update(
            "tool_call",
            {"route": "s1/q", "parentToolCallId": "q"},
            toolCallId="s1/q/y",
            title="stray",
            status="in_progress",
        ),
        update(
            "tool_call_update",
            toolCallId="a",
            status="failed",
            content=result("Error: subagent run failed\nPartial output before the run ended:\nfound"),
        ),
        update("tool_call_update", toolCallId="b", status="completed"),
        frame({"id": 3, "result": {"stopReason": "end_turn"}}),
    ]

    def log(route: str, header: dict[str, Any], *calls: tuple[str, str]) -> list[Any]:
        events = [{"type": "tool/call", "data": {"callId": call_id, "name": name}} for call_id, name in calls]
        return [{"type": "session", "id": route, "route": route, **header}, {"type": "turn/start", "data": {}}, *events]

    logs = {
        "s1": log("s1", {}, ("a", "subagent"), ("b", "subagent_fork")),
        "s1/a": log("s1/a", {"parentSession": "s1", "spawnCallId": "a"}, ("g", "subagent")),
        "s1/a/g": log("s1/a/g", {"parentSession": "s1/a", "spawnCallId": "g"}, ("x", "bash")),
        "s1/b": log("s1/b", {"parentSession": "s1", "spawnCallId": "b"}),
        "s9": [],
    }
    fake_run(monkeypatch, stdout, logs, [])
    out = io.StringIO()
    assert demo.run_demo(out) == 0
    assert out.getvalue().splitlines()[2:] == [
        "> go",
        "",
        "  agent: On it.",
        "  subagent a: Dig",
        "    │ subagent g: Dig deeper",
        "    │   │ bash x: ls [completed]",
        "    │   │     a.txt",
        "    │   └ completed: found a.txt",
        "    └ failed: Error: subagent run failed",
        "      Partial output before the run ended:",
        "      found",
        "  subagent_fork b: Idle",
        "    └ completed:",
        "  stop reason: end_turn",
        "",
        "after the last answer:",  # its delegating call never completed: it goes last
        "  tool y: stray [in_progress]",
    ]
