"""What the editor sees of an approval, through the real server process: the card `pending`
while the user is asked (then `in_progress`), the change a write would make in the request, and a
request withdrawn (`$/cancel_request`) when the prompt is cancelled before the user answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, spawn_server

pytestmark = pytest.mark.anyio


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def env_for(tmp_path: Path, script: Any) -> dict[str, str]:
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    return {
        "ACP_AGENT_SCRIPT": str(tmp_path / "script.json"),
        "ACP_AGENT_SESSIONS": str(tmp_path / "sessions"),
        "ACP_AGENT_PERMISSIONS": "ask",
    }


async def new_session(wire: Wire, cwd: Path) -> str:
    await wire.request("initialize", {"protocolVersion": 1})
    created = await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(created["result"]["sessionId"])


def card_updates(wire: Wire, call_id: str) -> list[dict[str, Any]]:
    """The call's updates and permission requests, in order: (kind, status)."""
    out = []
    for frame in wire.received:
        params = frame.get("params") or {}
        if frame.get("method") == "session/update" and params["update"].get("toolCallId") == call_id:
            out.append({"frame": params["update"]["sessionUpdate"], "status": params["update"].get("status")})
        elif frame.get("method") == "session/request_permission" and params["toolCall"]["toolCallId"] == call_id:
            out.append({"frame": "request_permission", "status": params["toolCall"].get("status")})
    return out


async def test_a_write_waiting_for_approval_is_pending_and_its_request_shows_the_diff(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "notes.md").write_text("draft\n", encoding="utf-8")
    write = {"path": "notes.md", "content": "final\n"}
    read = {
        "toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "notes.md"}}]
    }  # read before write
    script = [read, {"toolCalls": [{"id": "call_write", "name": "write_file", "arguments": write}]}, {"text": "Done."}]
    asked: list[Frame] = []

    async def allow_once(request: Frame) -> Frame:
        asked.append(request)
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
        }

    async with spawn_server(config=RECORD_CONFIG, env=env_for(tmp_path, script)) as wire:
        wire.answer = allow_once
        session_id = await new_session(wire, cwd)
        answered = await wire.request(
            "session/prompt", {"sessionId": session_id, "prompt": [text("Finish the notes.")]}
        )
    assert answered["result"] == {"stopReason": "end_turn"}
    assert (cwd / "notes.md").read_text() == "final\n"
    [request] = asked
    tool_call = request["params"]["toolCall"]
    path = str(cwd / "notes.md")
    assert tool_call["status"] == "pending"
    assert tool_call["content"] == [{"type": "diff", "path": path, "oldText": "draft\n", "newText": "final\n"}]
    assert tool_call["locations"] == [{"path": path}]
    assert card_updates(wire, "call_write") == [
        {"frame": "tool_call", "status": "in_progress"},
        {"frame": "tool_call_update", "status": "pending"},
        {"frame": "request_permission", "status": "pending"},
        {"frame": "tool_call_update", "status": "in_progress"},  # approved: it runs now
        {"frame": "tool_call_update", "status": None},  # the diff it made
        {"frame": "tool_call_update", "status": "completed"},
    ]


async def test_a_cancel_while_the_user_is_asked_withdraws_the_request_and_its_late_answer_is_ignored(
    tmp_path: Path,
) -> None:
    script = [
        {"toolCalls": [{"id": "call_rm", "name": "bash", "arguments": {"command": "touch ran"}}]},
        {"text": "No."},
    ]
    asked: list[Frame] = []

    async def leave_unanswered(request: Frame) -> None:
        asked.append(request)

    async with spawn_server(config=RECORD_CONFIG, env=env_for(tmp_path, script)) as wire:
        wire.answer = leave_unanswered
        session_id = await new_session(wire, tmp_path)
        prompt = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Clean up.")]})
        await wire.wait_for(lambda f: f.get("method") == "session/request_permission")
        await wire.notify("session/cancel", {"sessionId": session_id})
        cancelled = await wire.response(prompt)
        withdrawn = await wire.wait_for(lambda f: f.get("method") == "$/cancel_request")
        [request] = asked
        late = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": late})
        listed = await wire.request("session/list", {})  # after the late answer: the server went on
    assert cancelled["result"] == {"stopReason": "cancelled"}
    assert withdrawn["params"] == {"requestId": request["id"]}
    assert "result" in listed
    assert not (tmp_path / "ran").exists()
    assert "dropping" not in wire.stderr_text  # the late answer was expected: no warning
    assert [f["id"] for f in wire.responses()].count(request["id"]) == 0  # never answered back
