"""Claude Code and Codex hooks through the real server: real hook scripts (tests/data/hooks) run
at each event, and what they decide changes the turn as those tools document."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, spawn_server
from tests.paths import ROOT

pytestmark = pytest.mark.anyio

HOOK = f"{sys.executable} {ROOT / 'tests' / 'data' / 'hooks' / 'hook.py'}"
CONTEXT = str(ROOT / "tests" / "data" / "hooks" / "context.sh")


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def command(line: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": line, **extra}


def write_json(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


class Run:
    """A project, a home, a script for the model, and what the hooks recorded."""

    def __init__(self, tmp_path: Path, script: Any, **env: str) -> None:
        self.cwd = tmp_path / "project"
        self.home = tmp_path / "home"
        self.cwd.mkdir()
        self.home.mkdir()
        self.sessions = tmp_path / "sessions"
        self.hook_log = tmp_path / "hooks.jsonl"
        write_json(tmp_path / "script.json", script)
        # The scripted model holds no key: the credential to keep from hooks is named as bash's.
        self.config = tmp_path / "cordis.yml"
        self.config.write_text(
            f"- include: {RECORD_CONFIG.resolve()}\n- id: bash\n  config: {{hideEnv: [DEEPSEEK_API_KEY]}}\n",
            encoding="utf-8",
        )
        self.env = {
            "ACP_AGENT_SCRIPT": str(tmp_path / "script.json"),
            "ACP_AGENT_SESSIONS": str(self.sessions),
            "HOME": str(self.home),
            "HOOK_LOG": str(self.hook_log),
            "DEEPSEEK_API_KEY": "sk-secret",
            **env,
        }

    def hook_inputs(self) -> list[dict[str, Any]]:
        if not self.hook_log.exists():
            return []
        return [json.loads(line) for line in self.hook_log.read_text().splitlines()]

    def events(self, session_id: str) -> list[dict[str, Any]]:
        lines = (self.sessions / session_id / "session.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines[1:]]


async def open_session(wire: Wire, cwd: Path) -> str:
    await wire.request("initialize", {"protocolVersion": 1})
    created = await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(created["result"]["sessionId"])


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event["data"] for event in events if event["type"] == kind]


def hook_messages(events: list[dict[str, Any]]) -> list[str]:
    """What hooks told the model (user messages of source `hook`)."""
    return [
        data["content"][0]["text"] for data in of_type(events, "user/message") if data["source"]["kind"] == "hook"
    ]


def agent_text(wire: Wire) -> str:
    return "".join(
        frame["params"]["update"]["content"]["text"]
        for frame in wire.received
        if frame.get("method") == "session/update"
        and frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def test_claude_hooks_guard_tools_add_context_and_hold_the_stop(tmp_path: Path) -> None:
    script = [
        {"toolCalls": [
            {"id": "call_rm", "name": "bash", "arguments": {"command": "rm -rf build"}},
            {"id": "call_write", "name": "write_file", "arguments": {"path": "notes.md", "content": "hi\n"}},
        ]},
        {"text": "Done."},
        {"text": "The tests pass."},
    ]
    run = Run(tmp_path, script)
    (run.cwd / "build").mkdir()
    write_json(run.cwd / ".claude" / "settings.json", {"hooks": {
        "SessionStart": [{"hooks": [command(CONTEXT)]}],
        "UserPromptSubmit": [{"hooks": [command(f"{HOOK} record")]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [command(f"{HOOK} deny-rm")]}],
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [command(
            f"{HOOK} print '{json.dumps({'hookSpecificOutput': {'additionalContext': 'notes.md was formatted.'}})}'"
        )]}],
        "Stop": [{"hooks": [command(f"{HOOK} stop-once")]}],
    }})
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Clean up, then write notes.")]})
        listed = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("/hooks")]})
    assert answered["result"] == {"stopReason": "end_turn"}
    assert listed["result"] == {"stopReason": "end_turn"}
    assert (run.cwd / "build").is_dir()  # the denied command never ran
    assert (run.cwd / "notes.md").read_text() == "hi\n"
    events = run.events(session_id)
    results = {r["callId"]: r for r in of_type(events, "tool/result")}
    assert results["call_rm"]["isError"]
    assert results["call_rm"]["content"][0]["text"] == "Error: a hook refused 'bash': rm -rf is not allowed here"
    assert results["call_write"]["content"][-1]["text"].endswith("notes.md was formatted.\n</hook-context>")
    assert hook_messages(events) == [
        '<hook-context event="SessionStart">\nThe current branch is main.\n</hook-context>',
        "Run the tests before you stop.",
    ]
    runs = of_type(events, "hook/run")
    assert [(r["event"], r["exitCode"], r.get("decision")) for r in runs] == [
        ("SessionStart", 0, None),
        ("UserPromptSubmit", 0, None),
        ("PreToolUse", 2, "deny"),
        ("PostToolUse", 0, None),
        ("Stop", 0, "deny"),
        ("Stop", 0, None),
    ]
    inputs = run.hook_inputs()
    assert [i["input"]["hook_event_name"] for i in inputs] == ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "Stop"]
    prompt, pre, post, first_stop, second_stop = (i["input"] for i in inputs)
    assert prompt["prompt"] == "Clean up, then write notes."
    assert prompt["session_id"] == session_id and prompt["cwd"] == str(run.cwd)
    assert prompt["transcript_path"] == str(run.sessions / session_id / "session.jsonl")
    assert pre["tool_name"] == "Bash" and pre["tool_input"]["command"] == "rm -rf build"
    assert pre["tool_use_id"] == "call_rm"
    assert post["tool_name"] == "Write" and post["tool_response"]["output"] == "Created notes.md (1 line)."
    assert (first_stop["stop_hook_active"], second_stop["stop_hook_active"]) == (False, True)
    assert {i["project"] for i in inputs} == {str(run.cwd)}
    assert {i["secret"] for i in inputs} == {None}  # credentials stay out of a hook's environment
    assert "PreToolUse [Bash]" in agent_text(wire) and ".claude/settings.json" in agent_text(wire)
