from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.snapshot import demo
from acp_agent.snapshot.runner import RunResult
from tests.paths import FIXTURES


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_demo_replays_the_bundled_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert demo.run_demo(out) == 0
    assert out.getvalue().splitlines()[2:] == [
        "> In notes.txt, change the status from draft to final, then show me the file.",
        "",
        "  thinking: I will edit notes.txt in place with sed and print it.",
        "  tool call_edit_1: sed -i 's/^status: draft$/status: final/' notes.txt && cat notes.txt [in_progress]",
        "  tool call_edit_1: completed",
        "      ```console",
        "      title: release notes",
        "      status: final",
        "      ```",
        "  agent: Done: notes.txt now says status: final.",
        "  stop reason: end_turn",
        "",
    ]


def test_the_bundled_scenario_is_a_real_copy_of_the_fixture() -> None:
    bundled, fixture = demo.demo_dir(), FIXTURES / demo.SCENARIO
    files = sorted(p.relative_to(bundled) for p in bundled.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(fixture) for p in fixture.rglob("*") if p.is_file())
    for name in files:
        assert not (bundled / name).is_symlink()
        assert (bundled / name).read_bytes() == (fixture / name).read_bytes()


def frame(obj: Any) -> str:
    return json.dumps(obj)


def test_thoughts_are_dimmed_on_a_terminal_and_failures_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def update(kind: str, **fields: Any) -> str:
        return frame({"method": "session/update", "params": {"update": {"sessionUpdate": kind, **fields}}})

    stdout = [
        update("agent_thought_chunk", content={"type": "text", "text": "hm"}),
        update("tool_call", toolCallId="c1", title="false", status="in_progress"),
        update("plan", entries=[]),
        update("tool_call_update", toolCallId="c1", status="failed", content=[{"type": "content", "content": {"text": "Error: no"}}]),
        frame({"id": 3, "error": {"code": -32603, "message": "Internal error: turn failed: x"}}),
        frame({"id": 1, "result": {}}),
    ]
    sent = [frame({"id": 1, "method": "initialize"}), frame({"id": 3, "method": "session/prompt", "params": {"prompt": [{"text": "go"}]}})]

    async def fake_run(directory: Path, workdir: Path) -> RunResult:
        return RunResult(stdout, "", {}, workdir, sent, 1, ["the server exited with code 1"])

    monkeypatch.setattr(demo, "run_scenario", fake_run)
    out = Terminal()
    assert demo.run_demo(out) == 1
    assert out.getvalue().splitlines()[2:] == [
        "> go",
        "",
        f"{demo.DIM}  thinking: hm{demo.RESET}",
        "  tool c1: false [in_progress]",
        "  tool c1: failed",
        "      Error: no",
        "  error: Internal error: turn failed: x",
        "",
    ]
    assert capsys.readouterr().err == "failure: the server exited with code 1\n"
