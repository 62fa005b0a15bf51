"""The harness's check that the replay served each route the fixture recorded for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_agent.snapshot.errors import FixtureMismatch
from acp_agent.snapshot.fixtures import check_fixtures, prompts


def header(session_id: str, **fields: Any) -> dict[str, Any]:
    return {"type": "session", "version": 0, "id": session_id, "createdAt": 0, **fields}


def message(text: str) -> dict[str, Any]:
    return {"type": "user/message", "data": {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}}


def spawn(call_id: str, prompt: str) -> dict[str, Any]:
    arguments = json.dumps({"description": "d", "prompt": prompt})
    return {"type": "tool/call", "data": {"callId": call_id, "name": "subagent", "arguments": arguments}}


def write(directory: Path, name: str, lines: list[Any]) -> None:
    directory.mkdir(exist_ok=True)
    (directory / name).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


RUN_CWD = Path("/work/run")
PARENT = [header("p", route="s1"), message("go"), spawn("call_a", "do a"), spawn("call_b", "do b")]
CHILD_A = [header("a", parentSession="p", route="s1/call_a", spawnCallId="call_a"), message("do a")]
CHILD_B = [header("b", parentSession="p", route="s1/call_b", spawnCallId="call_b"), message("do b")]


def scenario(tmp_path: Path) -> Path:
    directory = tmp_path / "scenario"
    write(directory, "session.jsonl", PARENT)
    write(directory, "session.1.jsonl", CHILD_A)
    write(directory, "session.2.jsonl", CHILD_B)
    return directory


def test_a_run_prompted_as_recorded_passes(tmp_path: Path) -> None:
    run = {"s1": PARENT, "s1/call_a": CHILD_A, "s1/call_b": CHILD_B, "s1/call_c": [header("c"), message("new")]}
    assert check_fixtures(scenario(tmp_path), run, RUN_CWD) == []


def test_a_route_prompted_otherwise_is_a_fixture_mismatch(tmp_path: Path) -> None:
    run = {"s1": PARENT, "s1/call_a": CHILD_B, "s1/call_b": CHILD_A}
    error = FixtureMismatch("s1/call_a", "session.1.jsonl", ["do a"], ["do b"])
    assert check_fixtures(scenario(tmp_path), run, RUN_CWD)[0] == f"replay: FixtureMismatch: {error}"
    assert str(error) == (
        "route 's1/call_a' replayed session.1.jsonl, recorded for the prompts ['do a'], but the run's agent on that"
        " route was prompted ['do b']"
    )
    assert (error.route, error.fixture, error.recorded, error.asked) == (
        "s1/call_a",
        "session.1.jsonl",
        ["do a"],
        ["do b"],
    )


def test_a_prompt_naming_the_recordings_cwd_matches_the_same_prompt_in_the_runs(tmp_path: Path) -> None:
    directory = tmp_path / "scenario"
    write(directory, "session.jsonl", [header("p"), message("Skill `review` (its files are in {{cwd}}/review)")])
    run = [header("p"), message("Skill `review` (its files are in /work/run/review)")]
    assert check_fixtures(directory, {"s1": run}, RUN_CWD) == []
    elsewhere = [header("p"), message("Skill `review` (its files are in /elsewhere/review)")]
    assert check_fixtures(directory, {"s1": elsewhere}, RUN_CWD) != []


def test_routes_the_run_never_created_are_left_to_the_server(tmp_path: Path) -> None:
    assert check_fixtures(scenario(tmp_path), {"s1": PARENT}, RUN_CWD) == []


def test_nothing_is_checked_without_usable_fixtures(tmp_path: Path) -> None:
    assert check_fixtures(tmp_path / "nowhere", {"s1": PARENT}, RUN_CWD) == []
    directory = tmp_path / "scenario"
    write(directory, "session.jsonl", [header("p")])
    write(directory, "session.1.jsonl", [header("a", parentSession="unknown")])  # the server refuses these
    (directory / "torn.jsonl").write_text('{"type": "session"', encoding="utf-8")
    write(directory, "stdout.golden.jsonl", [{"jsonrpc": "2.0", "id": 1, "result": {}}])
    assert check_fixtures(directory, {"s1": [header("p"), message("go")]}, RUN_CWD) == []


def test_a_forks_seed_is_not_its_own_prompt() -> None:
    fork = [header("f", seedLength=2), message("earlier"), {"type": "turn/end"}, message("now"), {"type": "odd"}]
    assert prompts(fork) == ["now"]
    assert prompts([]) == []
