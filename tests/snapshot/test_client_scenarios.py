"""What the `client-fs` and `client-terminal` scenarios did beyond their snapshots: the files the
harness's client changed on disk for the agent, the requests the agent made, and the terminal the
bash cards embed. Both scenarios are also in the parametrized `test_scenario`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.sandbox.backends import LAUNCHER
from acp_agent.snapshot.result import RunResult
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]


def frames(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout]


def agent_requests(result: RunResult) -> list[tuple[str, dict[str, Any]]]:
    return [(f["method"], f["params"]) for f in frames(result) if "method" in f and "id" in f]


def test_client_fs_reads_and_writes_through_the_client_which_changes_the_files(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "client-fs")
    assert result.failures == []
    requests = agent_requests(result)
    notes, changes = str(result.cwd / "notes.md"), str(result.cwd / "docs" / "CHANGES.md")
    assert [(method, params["path"]) for method, params in requests] == [
        ("fs/read_text_file", notes),  # read_file
        ("fs/read_text_file", notes),  # edit_file: read, then write
        ("fs/write_text_file", notes),
        ("fs/read_text_file", changes),  # write_file: the old text (the client: not found), then write
        ("fs/write_text_file", changes),
    ]
    session_id = next(f["result"]["sessionId"] for f in frames(result) if "sessionId" in f.get("result", {}))
    assert {params["sessionId"] for _, params in requests} == {session_id}
    assert (result.cwd / "notes.md").read_text() == "title: release notes\nversion: 0.2.0\nstatus: final\n"
    assert (
        result.cwd / "docs" / "CHANGES.md"
    ).read_text() == "# Changes\n\n## 0.2.0\n\n- The release notes are final.\n"
    assert (FIXTURES / "client-fs" / "workspace" / "notes.md").read_text().endswith("status: draft\n")


def test_client_terminal_runs_bash_in_the_clients_terminal_and_embeds_it(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "client-terminal")
    assert result.failures == []
    methods = [method for method, _ in agent_requests(result)]
    one_call = ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]
    assert methods == one_call * 2
    create = agent_requests(result)[0][1]
    # The editor's terminal runs the command behind the sandbox's launcher, as a local one would.
    assert (create["command"], create["args"][2], create["args"][-3:-1], create["cwd"], create["outputByteLimit"]) == (
        sys.executable, LAUNCHER, ["bash", "-c"], str(result.cwd), 30000
    )  # fmt: skip
    updates = [f["params"]["update"] for f in frames(result) if f.get("method") == "session/update"]
    bash_cards = [u for u in updates if u.get("toolCallId") in ("call_where", "call_check") and "content" in u]
    terminal_ids = [item["terminalId"] for u in bash_cards for item in u["content"] if item["type"] == "terminal"]
    assert len(set(terminal_ids)) == 2 and len(terminal_ids) == 4  # each: while running, then with the result
    results = [e["data"] for e in result.logs["s1"][1:] if e["type"] == "tool/result"]
    assert [r["content"][0]["text"] for r in results] == [
        f"in the editor terminal\n{result.cwd}\n",
        "checking\ncheck failed\n[exit code 3]",
    ]
    # The result: only the terminal (it shows the output), and the output as the model read it,
    # with the exit code, as rawOutput for clients that do not draw terminals.
    finals = [u for u in bash_cards if u.get("status") in ("completed", "failed")]
    assert [[item["type"] for item in u["content"]] for u in finals] == [["terminal"], ["terminal"]]
    assert [u["rawOutput"] for u in finals] == [
        {"output": f"in the editor terminal\n{result.cwd}\n", "exitCode": 0},
        {"output": "checking\ncheck failed\n", "exitCode": 3},
    ]
