"""What a project set up for Claude Code or Codex holds beside its hooks: local instruction
overlays, and instructions of a subdirectory joining when the agent first works under it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.test_hooks import Run, of_type, open_session, text, write_json
from tests.e2e.wire import Frame, spawn_server
from tests.paths import ROOT

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


async def test_the_projects_mcp_servers_connect_once_it_is_trusted(tmp_path: Path) -> None:
    echo = {"toolCalls": [{"id": "call_echo", "name": "mcp__proj__echo", "arguments": {"message": "hi"}}]}
    script = {"s1": [echo, {"text": "Echoed."}], "s2": [echo, {"text": "No server."}]}
    run = Run(tmp_path, script)
    server = {
        "command": sys.executable,
        "args": [str(ROOT / "fixtures" / "mcp" / "server.py")],
        "env": {"FIXTURE": "1"},
    }
    write_json(run.cwd / ".mcp.json", {"mcpServers": {"proj": server}})
    answers = iter(["allow_once", "reject_once"])
    asked: list[Frame] = []

    async def answer(request: Frame) -> Frame:
        asked.append(request)
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": next(answers)}},
        }

    async with spawn_server(config=run.config, env=run.env) as wire:
        wire.answer = answer
        trusted = await open_session(wire, run.cwd)
        await wire.request("session/prompt", {"sessionId": trusted, "prompt": [text("Echo.")]})
        untrusted = (await wire.request("session/new", {"cwd": str(run.cwd), "mcpServers": []}))["result"]["sessionId"]
        await wire.request("session/prompt", {"sessionId": untrusted, "prompt": [text("Echo.")]})
    listed = asked[0]["params"]["toolCall"]["content"][1]["content"]["text"]
    assert listed == f"{run.cwd / '.mcp.json'}:\n- `proj: {sys.executable} {ROOT / 'fixtures' / 'mcp' / 'server.py'}`"
    [echoed] = of_type(run.events(trusted), "tool/result")
    assert echoed["content"][0]["text"] == "echo: hi" and not echoed["isError"]
    [refused] = of_type(run.events(untrusted), "tool/result")
    assert refused["error"]["code"] == "unknown_tool"
