"""What a project set up for Claude Code or Codex holds beside its hooks: local instruction
overlays, and instructions of a subdirectory joining when the agent first works under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_hooks import Run, open_session, text
from tests.e2e.wire import spawn_server

pytestmark = pytest.mark.anyio


async def test_local_overlays_follow_and_a_subdirectory_joins_on_first_read(tmp_path: Path) -> None:
    script = [
        {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "pkg/sub/mod.py"}}]},
        {"toolCalls": [{"id": "call_again", "name": "read_file", "arguments": {"path": "pkg/sub/mod.py"}}]},
        {"text": "Read."},
    ]
    run = Run(tmp_path, script)
    (run.cwd / "AGENTS.md").write_text("Use tabs.\n", encoding="utf-8")
    (run.cwd / "AGENTS.local.md").write_text("I prefer short answers.\n", encoding="utf-8")
    (run.cwd / "CLAUDE.local.md").write_text("My sandbox URL is local.\n", encoding="utf-8")
    (run.cwd / "pkg" / "sub").mkdir(parents=True)
    (run.cwd / "pkg" / "sub" / "AGENTS.md").write_text("Modules here are generated.\n", encoding="utf-8")
    (run.cwd / "pkg" / "sub" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Read the module.")]})
    events = run.events(session_id)
    updates = [(i, e["data"]) for i, e in enumerate(events) if e["type"] == "instructions/update"]
    assert [[Path(f["path"]).relative_to(run.cwd) for f in data["files"]] for _, data in updates] == [
        [Path("AGENTS.md"), Path("AGENTS.local.md"), Path("CLAUDE.local.md")],
        [Path("AGENTS.md"), Path("AGENTS.local.md"), Path("CLAUDE.local.md"), Path("pkg/sub/AGENTS.md")],
    ]
    joined_at = updates[1][0]
    kinds = [e["type"] for e in events]
    assert kinds[joined_at - 1] == "tool/call" and kinds[joined_at + 1] == "tool/display"  # before the read ran
    assert "Modules here are generated." in updates[1][1]["text"]
