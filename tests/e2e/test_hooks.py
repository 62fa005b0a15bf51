"""Claude Code and Codex hooks through the real server: real hook scripts (tests/data/hooks) run
at each event, and what they decide changes the turn as those tools document."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, method_not_found, spawn_server
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
        self.config_dir = tmp_path / "config"
        self.config_dir.mkdir()
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
            "ACP_AGENT_CONFIG": str(self.config_dir),
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


def is_trust_question(request: Frame) -> bool:
    return str(request["params"]["toolCall"]["toolCallId"]).startswith("trust-")


async def trust_once(request: Frame) -> Frame:
    """The client's answer: trust the project for the session (any other request: not found)."""
    if request["method"] == "session/request_permission" and is_trust_question(request):
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
        }
    return await method_not_found(request)


async def open_session(wire: Wire, cwd: Path) -> str:
    if wire.answer is method_not_found:
        wire.answer = trust_once
    await wire.request("initialize", {"protocolVersion": 1})
    created = await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(created["result"]["sessionId"])


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event["data"] for event in events if event["type"] == kind]


def hook_messages(events: list[dict[str, Any]]) -> list[str]:
    """What hooks told the model (user messages of source `hook`)."""
    return [data["content"][0]["text"] for data in of_type(events, "user/message") if data["source"]["kind"] == "hook"]


def agent_text(wire: Wire) -> str:
    return "".join(
        frame["params"]["update"]["content"]["text"]
        for frame in wire.received
        if frame.get("method") == "session/update"
        and frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def test_claude_hooks_guard_tools_add_context_and_hold_the_stop(tmp_path: Path) -> None:
    script = [
        {
            "toolCalls": [
                {"id": "call_rm", "name": "bash", "arguments": {"command": "rm -rf build"}},
                {"id": "call_write", "name": "write_file", "arguments": {"path": "notes.md", "content": "hi\n"}},
            ]
        },
        {"text": "Done."},
        {"text": "The tests pass."},
    ]
    run = Run(tmp_path, script)
    (run.cwd / "build").mkdir()
    formatted = json.dumps({"hookSpecificOutput": {"additionalContext": "notes.md was formatted."}})
    write_json(
        run.cwd / ".claude" / "settings.json",
        {
            "hooks": {
                "SessionStart": [{"hooks": [command(CONTEXT)]}],
                "UserPromptSubmit": [{"hooks": [command(f"{HOOK} record")]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [command(f"{HOOK} deny-rm")]}],
                "PostToolUse": [
                    {
                        "matcher": "Write|Edit",
                        "hooks": [command(f"{HOOK} print '{formatted}'")],
                    }
                ],
                "Stop": [{"hooks": [command(f"{HOOK} stop-once")]}],
            }
        },
    )
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        answered = await wire.request(
            "session/prompt", {"sessionId": session_id, "prompt": [text("Clean up, then write notes.")]}
        )
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
    assert [i["input"]["hook_event_name"] for i in inputs] == [
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "Stop",
    ]
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


def printing(document: Any) -> str:
    return f"{HOOK} print '{json.dumps(document)}'"


async def test_codex_hooks_rewrite_ask_block_a_prompt_and_stop_blocking_after_eight(tmp_path: Path) -> None:
    script = [
        {
            "toolCalls": [
                {"id": "call_echo", "name": "bash", "arguments": {"command": "echo original"}},
                {"id": "call_write", "name": "write_file", "arguments": {"path": "out.txt", "content": "x\n"}},
            ]
        },
        *({"text": f"Answer {n}."} for n in range(9)),
    ]
    run = Run(tmp_path, script)
    write_json(
        run.home / ".codex" / "hooks.json",
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "^Bash$",
                        "hooks": [
                            command(
                                printing(
                                    {
                                        "hookSpecificOutput": {
                                            "hookEventName": "PreToolUse",
                                            "permissionDecision": "allow",
                                            "updatedInput": {"command": "echo rewritten"},
                                        }
                                    }
                                )
                            )
                        ],
                    },
                    {
                        "matcher": "apply_patch",
                        "hooks": [command(printing({"hookSpecificOutput": {"permissionDecision": "ask"}}))],
                    },
                ],
                "UserPromptSubmit": [{"hooks": [command(f"{HOOK} block-secret")]}],
                "Stop": [{"hooks": [command(printing({"decision": "block", "reason": "Keep going."}))]}],
            }
        },
    )
    asked: list[Frame] = []

    async def reject(request: Frame) -> Frame:
        asked.append(request)
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "reject_once"}},
        }

    async with spawn_server(config=run.config, env=run.env) as wire:
        wire.answer = reject
        session_id = await open_session(wire, run.cwd)
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Go.")]})
        blocked = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("my secret is 42")]})
    assert answered["result"] == {"stopReason": "end_turn"}
    assert blocked["result"] == {"stopReason": "end_turn"}  # and no model call: the script has none left
    [request] = asked  # `ask` asks though the mode would not
    assert request["params"]["toolCall"]["toolCallId"] == "call_write"
    assert not (run.cwd / "out.txt").exists()
    events = run.events(session_id)
    results = {r["callId"]: r for r in of_type(events, "tool/result")}
    assert results["call_echo"]["content"][0]["text"] == "rewritten\n"
    assert results["call_write"]["isError"]
    assert [r.get("updatedInput") for r in of_type(events, "hook/run") if r["event"] == "PreToolUse"] == [
        {"command": "echo rewritten"},
        None,
    ]
    assert hook_messages(events) == ["Keep going."] * 8
    said = agent_text(wire)
    assert "A Stop hook blocked the end of the turn 8 times in a row; the turn ends here." in said
    assert "A hook blocked this prompt: Prompts must not carry secrets." in said
    assert "Answer 8." in said
    assert of_type(events, "turn/end")[-1]["reason"] == {"kind": "completed"}


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_for_file(path: Path) -> str:
    with anyio.fail_after(10):
        while not path.exists() or not path.read_text():
            await anyio.sleep(0.02)
    return path.read_text()


async def test_broken_hooks_are_logged_and_never_block(tmp_path: Path) -> None:
    script = [
        {"toolCalls": [{"id": "call_echo", "name": "bash", "arguments": {"command": "echo ran"}}]},
        {"text": "Done."},
    ]
    run = Run(tmp_path, script)
    pid_file = tmp_path / "slow.pid"
    write_json(
        run.config_dir / "hooks.json",
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "bash",
                        "hooks": [
                            command(f"{HOOK} garbage"),
                            command(f"{HOOK} fail"),
                            command(f"{HOOK} sleep {pid_file}", timeout=1),
                            {"type": "prompt", "prompt": "Is this command safe?"},
                        ],
                    }
                ]
            }
        },
    )
    invalid = {"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": [command(printing({"decision": "block"}))]}]}}
    write_json(run.cwd / ".claude" / "settings.local.json", invalid)
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Echo.")]})
        await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("/hooks")]})
    assert answered["result"] == {"stopReason": "end_turn"}
    events = run.events(session_id)
    [result] = of_type(events, "tool/result")
    assert result["content"][0]["text"] == "ran\n"
    runs = {r["command"].split()[2]: r for r in of_type(events, "hook/run")}
    assert runs["garbage"]["error"] == "its output is not a JSON object"
    assert runs["fail"]["error"] == "exited with 1: the hook broke"
    assert runs["sleep"]["error"] == "timed out after 1 s" and runs["sleep"].get("exitCode") is None
    assert not alive(int(pid_file.read_text()))
    listing = agent_text(wire)
    assert (
        "settings.local.json not read: the matcher 'Bash(' of `hooks.PreToolUse` is not a valid regular expression"
        in listing
    )
    assert "handlers of type prompt skipped" in listing
    assert "garbage" in listing


async def test_a_cancel_ends_a_running_hook(tmp_path: Path) -> None:
    script = [{"toolCalls": [{"id": "call_echo", "name": "bash", "arguments": {"command": "echo ran"}}]}]
    run = Run(tmp_path, script)
    pid_file = tmp_path / "slow.pid"
    write_json(
        run.cwd / ".claude" / "settings.json",
        {"hooks": {"PreToolUse": [{"hooks": [command(f"{HOOK} sleep {pid_file}")]}]}},
    )
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        prompt = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Echo.")]})
        pid = int(await wait_for_file(pid_file))
        await wire.notify("session/cancel", {"sessionId": session_id})
        answered = await wire.response(prompt)
    assert answered["result"] == {"stopReason": "cancelled"}
    assert not alive(pid)
    [result] = of_type(run.events(session_id), "tool/result")
    assert result["isError"]


async def test_subagent_hooks_run_for_the_child(tmp_path: Path) -> None:
    script = {
        "s1": [
            {
                "toolCalls": [
                    {
                        "id": "call_sub",
                        "name": "subagent",
                        "arguments": {"description": "Look", "prompt": "Look around."},
                    }
                ]
            },
            {"text": "Parent done."},
        ],
        "s1/call_sub": [{"text": "Child done."}, {"text": "Child tested."}],
    }
    run = Run(tmp_path, script)
    context = {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "You are a child."}}
    write_json(
        run.cwd / ".claude" / "settings.json",
        {
            "hooks": {
                "SubagentStart": [{"hooks": [command(printing(context))]}],
                "SubagentStop": [{"hooks": [command(f"{HOOK} stop-once")]}],
                "Stop": [{"hooks": [command(f"{HOOK} record")]}],
            }
        },
    )
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Delegate.")]})
    assert answered["result"] == {"stopReason": "end_turn"}
    [child_id] = [p.name for p in run.sessions.iterdir() if p.name != session_id and (p / "session.jsonl").exists()]
    child = run.events(child_id)
    assert hook_messages(child) == [
        '<hook-context event="SubagentStart">\nYou are a child.\n</hook-context>',
        "Run the tests before you stop.",
    ]
    [start, stop, _, parent_stop] = [i["input"] for i in run.hook_inputs()]
    assert start["hook_event_name"] == "SubagentStart" and start["agent_id"] == child_id
    assert stop["hook_event_name"] == "SubagentStop" and stop["parent_session_id"] == session_id
    assert parent_stop["hook_event_name"] == "Stop" and parent_stop["session_id"] == session_id
    [result] = of_type(run.events(session_id), "tool/result")
    assert result["content"][0]["text"] == "Child tested."


async def test_post_hooks_block_a_result_or_end_the_turn_and_a_bad_rewrite_fails_the_call(tmp_path: Path) -> None:
    script = [
        {
            "toolCalls": [
                {"id": "call_echo", "name": "bash", "arguments": {"command": "echo hidden"}},
                {
                    "id": "call_edit",
                    "name": "edit_file",
                    "arguments": {"path": "a.txt", "old_text": "a", "new_text": "b"},
                },
            ]
        },
        {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "a.txt"}}]},
    ]
    run = Run(tmp_path, script)
    (run.cwd / "a.txt").write_text("a\n", encoding="utf-8")
    write_json(
        run.cwd / ".claude" / "settings.json",
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Edit",
                        "hooks": [
                            command(printing({"hookSpecificOutput": {"updatedInput": {"replace_all": "maybe"}}}))
                        ],
                    }
                ],
                "PostToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [
                            command(
                                printing(
                                    {"decision": "block", "reason": "Output withheld.", "systemMessage": "Linted."}
                                )
                            )
                        ],
                    },
                    {
                        "matcher": "Read",
                        "hooks": [command(printing({"continue": False, "stopReason": "Enough reading."}))],
                    },
                ],
            }
        },
    )
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd)
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Work.")]})
    assert answered["result"] == {"stopReason": "end_turn"}  # no third model call: the script has none
    assert (run.cwd / "a.txt").read_text() == "a\n"
    events = run.events(session_id)
    results = {r["callId"]: r for r in of_type(events, "tool/result")}
    assert results["call_echo"]["content"][0]["text"] == "Error: a hook blocked the result of 'bash': Output withheld."
    assert results["call_edit"]["error"]["code"] == "hook_invalid_input"
    assert not results["call_read"]["isError"]
    said = agent_text(wire)
    assert "Linted." in said and "A hook stopped the turn: Enough reading." in said


async def test_a_client_with_notices_reads_hook_messages_as_notices(tmp_path: Path) -> None:
    """A hook's `systemMessage` and a blocked prompt's reason are notices to a client that shows
    them (info, warning), logged as the agent's message for any other client (and a later load)."""
    run = Run(tmp_path, [])
    blocking = {"decision": "block", "reason": "Not today.", "systemMessage": "Prompt checked."}
    write_json(
        run.cwd / ".claude" / "settings.json",
        {"hooks": {"UserPromptSubmit": [{"hooks": [command(printing(blocking))]}]}},
    )
    async with spawn_server(config=run.config, env=run.env) as wire:
        wire.answer = trust_once
        await wire.request("initialize", {"protocolVersion": 1, "clientCapabilities": {"session": {"notices": {}}}})
        created = await wire.request("session/new", {"cwd": str(run.cwd), "mcpServers": []})
        session_id = created["result"]["sessionId"]
        blocked = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Hello.")]})
    assert blocked["result"] == {"stopReason": "end_turn"}  # and no model call: the script has none
    notices = [
        frame["params"]["update"]
        for frame in wire.received
        if frame.get("method") == "session/update" and frame["params"]["update"]["sessionUpdate"] == "notice"
    ]
    assert notices == [
        {"sessionUpdate": "notice", "severity": "info", "title": "Prompt checked."},
        {"sessionUpdate": "notice", "severity": "warning", "title": "A hook blocked this prompt: Not today."},
    ]
    assert agent_text(wire) == ""
    replies = of_type(run.events(session_id), "command/reply")
    assert [(r["text"], r["notice"]) for r in replies] == [
        ("Prompt checked.", "info"),
        ("A hook blocked this prompt: Not today.", "warning"),
    ]
