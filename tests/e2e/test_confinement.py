"""Confinement and bounded reads through the real server process: a read of a 1 GB file runs
beside the connection, and a write of a large file shows a note instead of its text twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_server import Scripted, session_log, text
from tests.e2e.wire import Frame
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
        {"toolCalls": [{"id": "call_write", "name": "write_file", "arguments": {"path": "large.txt", "content": LARGE}}]},
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
    assert content[0]["content"]["text"] == f"```\n  {LAST_LINE}\tthe last line\n[lines {LAST_LINE}-{LAST_LINE} of {LAST_LINE}]\n```"

    assert (server.cwd / "large.txt").read_text() == LARGE
    written = next(f for f in frames if update_of(f, "call_write", "completed"))["params"]["update"]["content"]
    note = "large.txt is over 1 MiB (1.1 MiB): the change is not shown as a diff."
    assert [item["type"] for item in written] == ["content", "content"]
    assert written[1]["content"]["text"] == note
    [display] = [e["data"] for e in session_log(server.sessions, session_id) if e.get("type") == "tool/display" and e["data"]["callId"] == "call_write"]
    assert display == {"callId": "call_write", "locations": [{"path": f"{server.cwd}/large.txt"}], "notes": [note]}
