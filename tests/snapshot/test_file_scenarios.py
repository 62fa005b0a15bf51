"""What the `file-edit` and `plan` scenarios did beyond their snapshots: the files in the run's
cwd, and the updates an editor acts on (diffs, locations, plans). Both scenarios are also in the
parametrized `test_scenario` (it runs every fixtures/<name>/ directory)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.snapshot.result import RunResult
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]


def updates(result: RunResult, kind: str) -> list[dict[str, Any]]:
    frames = [json.loads(line) for line in result.stdout]
    found = [f["params"]["update"] for f in frames if f.get("method") == "session/update"]
    return [update for update in found if update["sessionUpdate"] == kind]


def test_the_scenarios_exist() -> None:
    for name in ("file-edit", "plan"):
        assert (FIXTURES / name / "input.json").is_file()
        assert (FIXTURES / name / "session.jsonl").is_file()


def test_file_edit_changes_the_files_in_the_run_cwd(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "file-edit")
    assert result.failures == []
    assert (
        result.cwd / "greet.py"
    ).read_text() == 'def greet(name):\n    return f"Hello, {name}"\n\n\nprint(greet("world"))\n'
    assert (
        result.cwd / "docs" / "README.md"
    ).read_text() == "# greet\n\nRun `python greet.py`: it prints `Hello, world`.\n"
    # The fixture's own workspace is a template the run copied, never touched.
    assert sorted(p.name for p in (FIXTURES / "file-edit" / "workspace").iterdir()) == ["greet.py"]
    assert '" + name' in (FIXTURES / "file-edit" / "workspace" / "greet.py").read_text()


def test_file_edit_shows_the_editor_locations_and_diffs(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "file-edit")
    cwd = str(result.cwd)
    progress = updates(result, "tool_call_update")
    located = {u["toolCallId"]: u["locations"] for u in progress if "locations" in u}
    assert located == {
        "call_read": [{"path": f"{cwd}/greet.py", "line": 1}],
        "call_edit": [{"path": f"{cwd}/greet.py", "line": 2}],
        "call_write": [{"path": f"{cwd}/docs/README.md"}],
    }
    final = {u["toolCallId"]: u["content"] for u in progress if u.get("status") == "completed"}
    [edit_diff] = [item for item in final["call_edit"] if item["type"] == "diff"]
    assert edit_diff["oldText"] == (FIXTURES / "file-edit" / "workspace" / "greet.py").read_text()
    assert edit_diff["newText"] == (result.cwd / "greet.py").read_text()
    [write_diff] = [item for item in final["call_write"] if item["type"] == "diff"]
    assert "oldText" not in write_diff and write_diff["path"] == f"{cwd}/docs/README.md"


def test_plan_sends_the_whole_plan_each_time_it_changes(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "plan")
    assert result.failures == []
    assert (result.cwd / "VERSION").read_text() == "0.2.0\n"
    plans = [[(e["content"], e["status"]) for e in u["entries"]] for u in updates(result, "plan")]
    assert plans == [
        [("Bump VERSION to 0.2.0", "in_progress"), ("Update the changelog", "pending"), ("Tag the release", "pending")],
        [("Bump VERSION to 0.2.0", "completed"), ("Update the changelog", "pending"), ("Tag the release", "pending")],
    ]
    log = result.logs["s1"][1:]
    assert [e["data"]["todos"][0]["status"] for e in log if e["type"] == "todo/update"] == ["in_progress", "completed"]
