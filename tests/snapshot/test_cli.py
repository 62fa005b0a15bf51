"""`python -m acp_agent.snapshot run|record`, called in process (so coverage sees the harness)."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import sys
from pathlib import Path

import pytest

from acp_agent.snapshot.cli import main
from tests.paths import FIXTURES
from tests.snapshot.conftest import write_scenario

OPEN = [{"op": "initialize"}, {"op": "newSession"}]


def test_run_prints_the_raw_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(FIXTURES / "handshake"), "--jitter", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["id"] == 2
    assert json.loads(lines[2])["params"]["update"]["sessionUpdate"] == "available_commands_update"
    assert "{{sessionId" not in lines[1]


def test_run_writes_the_normalized_transcript_and_fails_on_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = write_scenario(tmp_path / "scenario", [*OPEN, {"op": "newSessionExpectError"}])
    (tmp_path / "scenario" / "session.jsonl").write_text('{"type":"session","version":0,"id":"x","createdAt":0}\n')
    out = tmp_path / "out.jsonl"
    assert main(["run", str(scenario), "--normalize", "--out", str(out)]) == 1
    document = out.read_text().splitlines()
    assert document[:3] == ["--- summary ---", "initialize: ok", "session/new: ok"]
    transcript = document[document.index("--- transcript ---") + 1 :]
    assert transcript[2].startswith('>> {"jsonrpc":"2.0","id":2,"method":"session/new"')
    created = json.loads(transcript[3].removeprefix("<< "))
    assert (created["id"], created["result"]["sessionId"]) == (2, "{{sessionId:1}}")
    assert "failure: step 3 (newSessionExpectError): expected an error" in capsys.readouterr().err


def test_an_invalid_scenario_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(f"error: invalid scenario {tmp_path / 'input.json'}")
    assert main(["record", str(tmp_path)]) == 1
    assert f"error: invalid scenario {tmp_path / 'script.json'}" in capsys.readouterr().err


def test_record_writes_logs_overrides_and_the_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [*OPEN, {"op": "promptExpectError", "text": "fail"}, {"op": "promptAndCancel", "text": "wait"},
             {"op": "prompt", "text": "hi"}]  # fmt: skip
    scenario = write_scenario(tmp_path / "scenario", steps)
    (scenario / "session.9.jsonl").write_text("stale\n")
    calls = [{"throw": {"message": "boom", "code": "SERVER", "text": "half"}}, {"hang": True}, {"text": "pwd"}]
    script = tmp_path / "elsewhere.json"
    script.write_text(json.dumps(calls))
    assert main(["record", str(scenario), "--script", str(script)]) == 0
    assert capsys.readouterr().err == f"recorded {scenario}: session.jsonl (s1)\n"
    assert sorted(p.name for p in scenario.iterdir()) == [
        "input.json",
        "replay.override.json",
        "script.json",
        "session.jsonl",
    ]
    header = json.loads((scenario / "session.jsonl").read_text().splitlines()[0])
    assert header["cwd"] == "{{cwd}}" and header["route"] == "s1"
    override = json.loads((scenario / "replay.override.json").read_text())
    assert [entry["kind"] for entry in override["s1"]] == ["throw", "hang", "chunks"]
    assert json.loads((scenario / "script.json").read_text()) == calls
    # The recorded fixtures replay cleanly.
    assert main(["run", str(scenario)]) == 0


def test_record_writes_a_file_per_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "subagent-spawn"
    shutil.copytree(FIXTURES / "subagent-spawn", scenario, ignore=shutil.ignore_patterns("session*.jsonl"))
    assert main(["record", str(scenario)]) == 0
    assert capsys.readouterr().err.endswith("session.jsonl (s1), session.1.jsonl (s1/call_spawn_1)\n")
    assert json.loads((scenario / "session.1.jsonl").read_text().splitlines()[0])["route"] == "s1/call_spawn_1"
    assert not (scenario / "replay.override.json").exists()


def test_record_writes_nothing_when_the_run_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = write_scenario(tmp_path / "no-session", [{"op": "initialize"}])
    (scenario / "script.json").write_text("[]")
    assert main(["record", str(scenario)]) == 1
    assert "failure: the run created no session" in capsys.readouterr().err
    scenario = write_scenario(tmp_path / "too-few-calls", [*OPEN, {"op": "prompt", "text": "hi"}])
    (scenario / "script.json").write_text("[]")
    assert main(["record", str(scenario)]) == 1
    assert "ScriptExhausted" in capsys.readouterr().err
    assert sorted(p.name for p in scenario.iterdir()) == ["input.json", "script.json"]


def test_record_live_without_a_key_fails_and_names_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    scenario = write_scenario(tmp_path / "live", [*OPEN, {"op": "prompt", "text": "hi"}])
    assert main(["record", str(scenario), "--live"]) == 1
    assert "DEEPSEEK_API_KEY" in capsys.readouterr().err
    assert sorted(p.name for p in scenario.iterdir()) == ["input.json"]


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("DEEPSEEK_API_KEY"), reason="needs DEEPSEEK_API_KEY")
def test_record_live_writes_the_real_models_logs(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path / "live", [*OPEN, {"op": "prompt", "text": "Reply with the single word PONG."}])
    assert main(["record", str(scenario), "--live"]) == 0
    assert (scenario / "session.jsonl").is_file()
    assert main(["run", str(scenario)]) == 0  # and it replays


def test_the_module_runs_as_a_program(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["acp_agent.snapshot"])
    with pytest.raises(SystemExit) as exit:
        runpy.run_module("acp_agent.snapshot", run_name="__main__")
    assert exit.value.code == 2  # argparse: a command is required
    assert "usage: python -m acp_agent.snapshot" in capsys.readouterr().err
