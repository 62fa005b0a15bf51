"""Confinement, bounded reads and secrets through the real server process: a read of a 1 GB file
runs beside the connection, a write of a large file shows a note instead of its text twice, and a
command's environment lacks the server's credentials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from acp_agent.kernel import read_rows
from tests.e2e.test_server import Scripted, check_stdout, session_log, text
from tests.e2e.wire import RECORD_CONFIG, Frame, spawn_server
from tests.sparse import LAST_LINE, memory_directory, sparse_file

pytestmark = pytest.mark.anyio

LARGE = "".join(f"{n:08} {'x' * 71}\n" for n in range(14_000))  # 1.1 MB


def update_of(frame: Frame, call_id: str, status: str | None = None) -> bool:
    update = frame.get("params", {}).get("update", {})
    return update.get("toolCallId") == call_id and (status is None or update.get("status") == status)


async def test_a_long_read_leaves_the_connection_free_and_a_large_write_shows_a_note(tmp_path: Path) -> None:
    read = {"path": "big.txt", "offset": LAST_LINE}
    calls: Any = [
        {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": read}]},
        {
            "toolCalls": [
                {"id": "call_write", "name": "write_file", "arguments": {"path": "large.txt", "content": LARGE}}
            ]
        },
        {"text": "Done."},
    ]
    server = Scripted(tmp_path, calls)
    with memory_directory(server.cwd) as server.cwd:
        await long_read_and_large_write(server)


async def long_read_and_large_write(server: Scripted) -> None:
    sparse_file(server.cwd / "big.txt")
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        prompt = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Read the end.")]})
        await wire.wait_for(lambda f: update_of(f, "call_read"))
        listed = await wire.start("session/list", {})  # while the read scans the 1 GB
        await wire.response(listed)
        assert (await wire.response(prompt, timeout=30))["result"] == {"stopReason": "end_turn"}
    frames = wire.received
    answered = next(i for i, f in enumerate(frames) if f.get("id") == listed and "method" not in f)
    read_done = next(i for i, f in enumerate(frames) if update_of(f, "call_read", "completed"))
    assert answered < read_done  # the list was answered while the read ran, not after it
    content = frames[read_done]["params"]["update"]["content"]
    assert (
        content[0]["content"]["text"]
        == f"```\n  {LAST_LINE}\tthe last line\n[lines {LAST_LINE}-{LAST_LINE} of {LAST_LINE}]\n```"
    )

    assert (server.cwd / "large.txt").read_text() == LARGE
    written = next(f for f in frames if update_of(f, "call_write", "completed"))["params"]["update"]["content"]
    note = "large.txt is over 1 MiB (1.1 MiB): the change is not shown as a diff."
    assert [item["type"] for item in written] == ["content", "content"]
    assert written[1]["content"]["text"] == note
    [display] = [
        e["data"]
        for e in session_log(server.sessions, session_id)
        if e.get("type") == "tool/display" and e["data"]["callId"] == "call_write"
    ]
    assert display == {"callId": "call_write", "locations": [{"path": f"{server.cwd}/large.txt"}], "notes": [note]}


CANARY = "sk-canary-0123456789abcdef"
OTHER_CANARY = "ghp-canary-fedcba9876543210"


def config_with_credentials(tmp_path: Path) -> Path:
    """The scripted composition plus a model row whose key is in ACP_TEST_MODEL_KEY (never called)
    and a bash row hiding ACP_TEST_TOKEN too."""
    rows: list[dict[str, Any]] = [row.model_dump() for row in read_rows(RECORD_CONFIG)]  # includes resolved
    for row in rows:
        if row["id"] == "bash":
            row["config"] = {"hideEnv": ["ACP_TEST_TOKEN"]}
    model = {"provider": "openai", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": "ACP_TEST_MODEL_KEY"}
    rows.append({"id": "keyed-model", "name": "acp_agent.llm.openai_compat", "config": model})
    path = tmp_path / "cordis.yml"
    path.write_text(yaml.safe_dump(rows), encoding="utf-8")
    return path


async def test_commands_never_see_the_servers_credentials_and_no_file_holds_them(tmp_path: Path) -> None:
    run_env = {"id": "call_env", "name": "bash", "arguments": {"command": "env; echo $ACP_TEST_MODEL_KEY > seen.txt"}}
    server = Scripted(tmp_path, [{"toolCalls": [run_env]}, {"text": "Done."}])
    env = {
        "ACP_AGENT_SCRIPT": str(server.script),
        "ACP_AGENT_SESSIONS": str(server.sessions),
        "ACP_TEST_MODEL_KEY": CANARY,
        "ACP_TEST_TOKEN": OTHER_CANARY,
        "ACP_TEST_VISIBLE": "plain value",
    }
    async with spawn_server(config=config_with_credentials(tmp_path), env=env) as wire:
        session_id = await server.new_session(wire)
        answer = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Show env.")]})
        assert answer["result"] == {"stopReason": "end_turn"}
        assert await wire.finish() == 0
    check_stdout(wire)
    done = next(f for f in wire.received if update_of(f, "call_env", "completed"))
    output = done["params"]["update"]["content"][0]["content"]["text"]
    assert "ACP_TEST_VISIBLE=plain value" in output  # the command did run `env`
    assert "ACP_TEST_MODEL_KEY" not in output and "ACP_TEST_TOKEN" not in output
    for frame in wire.received:
        assert CANARY not in json.dumps(frame) and OTHER_CANARY not in json.dumps(frame)
    assert CANARY not in wire.stderr_text
    written = [path for path in tmp_path.rglob("*") if path.is_file() and path.name != "cordis.yml"]
    assert server.cwd / "seen.txt" in written and (server.cwd / "seen.txt").read_text() == "\n"
    assert any(path.name == "session.jsonl" for path in written)
    for path in written:
        data = path.read_bytes()
        assert CANARY.encode() not in data and OTHER_CANARY.encode() not in data, path
