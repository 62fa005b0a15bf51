"""Project instructions through the real server (`fixtures/project-instructions`,
`fixtures/instructions-cut`): what the agents' logs say the model saw."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.instructions import FILE_LIMIT, INSTRUCTIONS_EVENT
from acp_agent.snapshot.result import RunResult
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]


def logged(log: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Each instructions event with the number of the turn it precedes."""
    found, turn = [], 0
    pending: list[dict[str, Any]] = []
    for event in log[1:]:
        if event["type"] == INSTRUCTIONS_EVENT:
            pending.append(event["data"])
        elif event["type"] == "turn/start":
            turn = event["data"]["turn"]
            found += [(turn, data) for data in pending]
            pending = []
    return found


def test_user_then_root_down_to_the_cwd_logged_again_after_an_edit_and_seen_by_a_child(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "project-instructions")
    cwd, config = str(result.cwd), str(result.config)
    parent = logged(result.logs["s1"])
    assert [turn for turn, _ in parent] == [1, 2]  # turn 3 found them unchanged
    assert [f["path"] for f in parent[0][1]["files"]] == [
        f"{config}/AGENTS.md", f"{cwd}/AGENTS.md", f"{cwd}/pkg/CLAUDE.md", f"{cwd}/pkg/app/AGENTS.md"
    ]  # fmt: skip
    assert "settings.toml" in parent[0][1]["text"] and "config/app.toml" in parent[1][1]["text"]
    [(turn, child)] = logged(result.logs["s1/call_helper_1"])
    assert (turn, child) == (1, parent[1][1])
    assert "outside.md" not in child["text"]


def test_a_file_over_32_kib_is_cut_with_a_note(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "instructions-cut")
    [(turn, data)] = logged(result.logs["s1"])
    assert turn == 1
    [shown] = data["files"]
    assert (shown["size"], shown["shown"]) == (35100, FILE_LIMIT)
    assert data["text"].endswith(f"Rule 072\n[... 2332 bytes of {result.cwd}/AGENTS.md not shown]")
