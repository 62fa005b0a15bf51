"""Background jobs through the real server: a job outlives its turn, the next model call is told
when it ended, and the server's exit ends what still runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.test_server import Scripted, session_log, text
from tests.unit.tools.test_jobs import alive

pytestmark = pytest.mark.anyio


async def test_a_job_outlives_its_turn_is_announced_when_it_ends_and_ends_with_the_server(tmp_path: Path) -> None:
    ending = "echo $$ > b.pid; until [ -e go ]; do sleep 0.01; done; echo finished"
    calls: Any = [
        {"toolCalls": [{"id": "call_a", "name": "bash", "arguments": {"command": "echo $$ > a.pid; exec sleep 60", "run_in_background": True}}]},
        {"toolCalls": [{"id": "call_b", "name": "bash", "arguments": {"command": ending, "run_in_background": True}}]},
        {"text": "Both run."},
        {"text": "Noted."},
    ]
    server = Scripted(tmp_path, calls)
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        first = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Start both.")]}, timeout=30)
        assert first["result"] == {"stopReason": "end_turn"}
        pid = int((server.cwd / "a.pid").read_text())
        (server.cwd / "go").touch()
        assert _job_lines(server, session_id) == []
        job_b = Path(f"/proc/{(server.cwd / 'b.pid').read_text().strip()}")
        with anyio.fail_after(10):
            while job_b.exists():  # gone once the server reaped it: its end is queued before the next prompt
                await anyio.sleep(0.01)
        second = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("And now?")]}, timeout=30)
        assert second["result"] == {"stopReason": "end_turn"}
        assert alive(pid)  # the job outlived both turns
    assert server.exit_code == 0
    assert not alive(pid)  # the server's exit ended it
    told = _job_lines(server, session_id)
    assert told == [f"[background job: job-2 exited with code 0: {ending}; job_output job-2 reads what it printed last]"]


def _job_lines(server: Scripted, session_id: str) -> list[str]:
    return [
        e["data"]["content"][0]["text"]
        for e in session_log(server.sessions, session_id)
        if e.get("type") == "user/message" and e["data"]["source"]["kind"] == "job"
    ]
