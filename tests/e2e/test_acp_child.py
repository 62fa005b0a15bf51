"""ACP agents as children (`acp_agent.subagents.acp`), through the real server: a second acp-agent
(scripted model) delegated to, its requests served through the editor, its turn cancelled, and
children that crash, hang at start or write garbage: each call fails with a clear error and
nothing of the child is left running. A background child messaged twice, a permission request
and a crash also replay as snapshot scenarios (fixtures/acp-child-*)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.subagents import texts
from tests.e2e.test_mcp import alive, prompt, results
from tests.e2e.test_server import Scripted, result_of
from tests.e2e.wire import Frame
from tests.paths import FIXTURES, ROOT

pytestmark = pytest.mark.anyio

RECORD = (ROOT / "cordis.record.yml").resolve()


def provider_row(
    row_id: str, name: str, args: list[str], *, env: dict[str, str] | None = None, timeout: float = 30
) -> str:
    config = {
        "providerName": name,
        "command": sys.executable,
        "args": args,
        "env": env or {},
        "startupTimeout": timeout,
        "title": name,
    }
    return f"- id: {row_id}\n  name: acp_agent.subagents.acp\n  config: {json.dumps(config)}\n"


def tool_row(name: str, provider: str) -> str:
    return f"- id: {name}\n  name: acp_agent.subagents.tool\n  config: {{toolName: {name}, provider: {provider}}}\n"


def second_agent(tmp_path: Path, answers: list[Any], env: dict[str, str] | None = None) -> str:
    """A row for another acp-agent whose scripted model makes the calls `answers` (a text stands
    for `{"text": ...}`). Delegated to by the parent's `call_second`, its session's route is
    `s1/call_second/s1` (it is told the route of the child agent it runs for)."""
    script = tmp_path / "child-script.json"
    calls = [{"text": answer} if isinstance(answer, str) else answer for answer in answers]
    script.write_text(json.dumps({"s1/call_second/s1": calls}), encoding="utf-8")
    env = {"ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(tmp_path / "child-sessions"), **(env or {})}
    return provider_row("acp-second", "second", ["-m", "acp_agent", "--config", str(RECORD)], env=env)


def delegate(call_id: str, tool: str, task: str, **more: Any) -> dict[str, Any]:
    return {"id": call_id, "name": tool, "arguments": {"description": task, "prompt": task, **more}}


def composition(tmp_path: Path, rows: str) -> Path:
    config = tmp_path / "cordis.yml"
    config.write_text(f"- include: {RECORD}\n{rows}", encoding="utf-8")
    return config


def left_running(tag: str) -> list[int]:
    """The processes whose command line holds `tag`."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if tag.encode() in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


NAMES = ("second", "crash", "garbage", "hang", "dies")


async def test_a_second_acp_agent_answers_and_broken_ones_fail_clearly(tmp_path: Path) -> None:
    tag = f"acp-child-test-{tmp_path.name}"
    crash = ["-c", "import sys; sys.stderr.write('no luck today\\n'); sys.exit(3)", tag]
    garbage = ["-c", "import time; print('hello there', flush=True); time.sleep(60)", tag]
    hang = ["-c", "import time; time.sleep(60)", tag]
    dies = [str(FIXTURES / "acp" / "fake_agent.py"), "dies", tag]  # once it has its task
    rows = (
        second_agent(tmp_path, ["The second agent's answer."])
        + provider_row("acp-crash", "crash", crash)
        + provider_row("acp-dies", "dies", dies)
        + provider_row("acp-garbage", "garbage", garbage)
        + provider_row("acp-hang", "hang", hang, timeout=1)
        + "".join(tool_row(f"ask_{name}", name) for name in NAMES)
    )
    calls = [delegate(f"call_{name}", f"ask_{name}", f"Say something, {name}.") for name in NAMES]
    server = Scripted(tmp_path, {"s1": [{"toolCalls": calls}, {"text": "done"}]})
    async with server.serve(config=composition(tmp_path, rows)) as wire:
        session_id = await server.new_session(wire)
        await prompt(wire, session_id, "Ask them all.")
        found = results(wire, session_id)
        assert left_running(tag) == []
        assert "no luck today" in wire.stderr_text  # the child's stderr is the server's log
    assert server.exit_code == 0
    assert found["call_second"] == "The second agent's answer."
    assert found["call_crash"] == "Error: " + texts.acp_exited("crash", 3)
    assert found["call_garbage"] == "Error: " + texts.acp_garbage("garbage", "hello there")
    assert found["call_hang"] == "Error: " + texts.acp_start_timeout("hang", 1)
    assert found["call_dies"] == "Error: " + texts.run_failed_because(texts.acp_exited("dies", 4))
    # The child's stand-in is a child session of the parent's: its log holds what the child said.
    child_logs = [
        path
        for path in server.sessions.rglob("session.jsonl")
        if json.loads(path.read_text().splitlines()[0]).get("spawnCallId") == "call_second"
    ]
    (stand_in,) = child_logs
    updates = [json.loads(line) for line in stand_in.read_text().splitlines() if '"acp/update"' in line]
    said = [u["data"]["update"] for u in updates if u["data"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(update["content"]["text"] for update in said) == "The second agent's answer."


async def test_an_acp_childs_permission_requests_file_reads_and_commands_go_through_the_parent(tmp_path: Path) -> None:
    touch = {"toolCalls": [{"id": "call_touch", "name": "bash", "arguments": {"command": "touch approved"}}]}
    read = {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "note.txt"}}]}
    rows = second_agent(tmp_path, [touch, read, "Touched."], env={"ACP_AGENT_PERMISSIONS": "ask"})
    rows += tool_row("ask_second", "second")
    server = Scripted(
        tmp_path, {"s1": [{"toolCalls": [delegate("call_second", "ask_second", "Touch a file.")]}, {"text": "done"}]}
    )
    asked: list[Frame] = []

    async def approve(request: Frame) -> Frame:
        asked.append(request)
        if request["method"] == "fs/read_text_file":  # the editor's buffer, not the disk
            return {"jsonrpc": "2.0", "id": request["id"], "result": {"content": "in the editor\n"}}
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
        }

    async with server.serve(config=composition(tmp_path, rows)) as wire:
        wire.answer = approve
        capabilities = {"subagents": {}, "fs": {"readTextFile": True}}
        await wire.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        response = await wire.request("session/new", {"cwd": str(server.cwd), "mcpServers": []})
        session_id = response["result"]["sessionId"]
        await prompt(wire, session_id, "Have it touch a file.")
        found = results(wire, session_id)
        [announced] = [
            params["update"]
            for params in wire.updates(session_id)
            if params["update"]["sessionUpdate"] == "subagent_update"
        ][:1]
        child_id = announced["sessionId"]
        child_updates = [params["update"] for params in wire.updates(child_id)]
        states = [
            params["update"]["state"]["state"]
            for params in wire.updates(session_id)
            if params["update"]["sessionUpdate"] == "subagent_update"
        ]
    assert server.exit_code == 0
    assert found["call_second"] == "Touched."
    assert (server.cwd / "approved").exists()
    request, read_request = asked
    # The child's file read went through the parent's workspace: the editor, on the child's session.
    assert read_request["method"] == "fs/read_text_file"
    assert read_request["params"]["sessionId"] == child_id
    assert read_request["params"]["path"] == str(server.cwd / "note.txt")
    assert request["params"]["sessionId"] == child_id  # asked on the child's own session
    assert request["params"]["toolCall"]["toolCallId"] == "call_touch"
    assert request["params"]["toolCall"]["_meta"] == {"acpAgent": {"route": "s1/call_second"}}
    assert "requires_action" in states
    shown = [(update["sessionUpdate"], update.get("toolCallId"), update.get("status")) for update in child_updates]
    assert ("tool_call", "call_touch", "pending") in shown or ("tool_call", "call_touch", "in_progress") in shown
    assert ("tool_call_update", "call_touch", "completed") in shown
    said = "".join(u["content"]["text"] for u in child_updates if u["sessionUpdate"] == "agent_message_chunk")
    assert said == "Touched."
    (child_log,) = (tmp_path / "child-sessions").rglob("session.jsonl")
    assert '"terminalId":"term-1"' in child_log.read_text()  # its command ran in a terminal of ours
    results_read = [
        line for line in child_log.read_text().splitlines() if '"tool/result"' in line and "call_read" in line
    ]
    assert "in the editor" in results_read[0]


async def test_an_acp_child_that_takes_additional_directories_works_in_the_parents_roots(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "notes.md").write_text("kept in the library\n")
    read = {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": str(lib / "notes.md")}}]}
    rows = second_agent(tmp_path, [read, "Read."]) + tool_row("ask_second", "second")
    task = delegate("call_second", "ask_second", "Read the notes.")
    server = Scripted(tmp_path, {"s1": [{"toolCalls": [task]}, {"text": "done"}]})
    async with server.serve(config=composition(tmp_path, rows)) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        params = {"cwd": str(server.cwd), "mcpServers": [], "additionalDirectories": [str(lib)]}
        session_id = result_of(await wire.request("session/new", params))["sessionId"]
        await prompt(wire, session_id, "Have it read the notes.")
        found = results(wire, session_id)
    assert server.exit_code == 0
    assert found["call_second"] == "Read."

    def logged(log: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in log.read_text().splitlines()[1:]]

    # The child opened its session with the parent's additional roots (it advertises them).
    (child_log,) = (tmp_path / "child-sessions").rglob("session.jsonl")
    child_events = logged(child_log)
    assert [event["data"]["directories"] for event in child_events if event["type"] == "session/roots"] == [[str(lib)]]
    # Its read there came back through the stand-in, which works in the same roots.
    [read_result] = [event["data"] for event in child_events if event["type"] == "tool/result"]
    assert not read_result["isError"] and "kept in the library" in json.dumps(read_result["content"])
    [stand_in] = [
        path
        for path in server.sessions.rglob("session.jsonl")
        if json.loads(path.read_text().splitlines()[0]).get("spawnCallId") == "call_second"
    ]
    assert [event["data"]["directories"] for event in logged(stand_in) if event["type"] == "session/roots"] == [
        [str(lib)]
    ]


async def test_a_cancelled_prompt_cancels_the_acp_childs_turn_and_the_child_ends_with_the_session(
    tmp_path: Path,
) -> None:
    rows = second_agent(tmp_path, [{"hang": True}]) + tool_row("ask_second", "second")
    server = Scripted(tmp_path, {"s1": [{"toolCalls": [delegate("call_second", "ask_second", "Think forever.")]}]})
    async with server.serve(config=composition(tmp_path, rows)) as wire:
        session_id = await server.new_session(wire)
        request = {"sessionId": session_id, "prompt": [{"type": "text", "text": "Go."}]}
        started = await wire.start("session/prompt", request)
        child_log = await _child_log_when_prompted(tmp_path)
        await wire.notify("session/cancel", {"sessionId": session_id})
        answer = await wire.response(started, timeout=30)
        found = results(wire, session_id)
    assert answer["result"] == {"stopReason": "cancelled"}
    assert found["call_second"] == "Error: the turn was cancelled before this call finished"
    ends = [json.loads(line)["data"]["reason"] for line in child_log.read_text().splitlines() if '"turn/end"' in line]
    assert ends == [{"kind": "aborted", "reason": "cancelled by the client"}]  # the child heard session/cancel


async def _child_log_when_prompted(tmp_path: Path) -> Path:
    """The second agent's log, once its turn has asked its (hanging) model."""
    with anyio.fail_after(20):
        while True:
            logs = list((tmp_path / "child-sessions").rglob("session.jsonl"))
            if logs and '"step/start"' in logs[0].read_text():
                return logs[0]
            await anyio.sleep(0.05)


NPM_BIN = ROOT / ".ci" / "npm" / "node_modules" / ".bin"
EXAMPLE_AGENT = (
    ROOT
    / ".ci"
    / "npm"
    / "node_modules"
    / "@zed-industries"
    / "agent-client-protocol"
    / "typescript"
    / "examples"
    / "agent.ts"
)
"""The example agent of the ACP TypeScript library (Zed's), shipped as source: `.ci/run` installs it
and `tsx`, which runs it, when npm exists. It needs no key and no network: it streams text, a tool
call, and asks permission for an edit."""


async def test_an_acp_agent_nobody_here_wrote_answers_as_a_child(tmp_path: Path) -> None:
    tsx = NPM_BIN / "tsx"
    if not (tsx.is_file() and EXAMPLE_AGENT.is_file()):
        reason = (
            "the ACP TypeScript library's example agent and tsx are not installed "
            "(.ci/run installs them when npm exists)"
        )
        print(reason)
        pytest.skip(reason)
    config = {"providerName": "example", "command": str(tsx), "args": [str(EXAMPLE_AGENT)], "title": "example"}
    rows = f"- id: acp-example\n  name: acp_agent.subagents.acp\n  config: {json.dumps(config)}\n" + tool_row(
        "ask_example", "example"
    )
    server = Scripted(
        tmp_path, {"s1": [{"toolCalls": [delegate("call_ex", "ask_example", "Fix the config.")]}, {"text": "done"}]}
    )
    asked: list[Frame] = []

    async def allow(request: Frame) -> Frame:
        asked.append(request)
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }

    async with server.serve(config=composition(tmp_path, rows)) as wire:
        wire.answer = allow
        session_id = await server.new_session(wire)  # no child sessions: its cards nest under the call's
        await prompt(wire, session_id, "Have the example agent fix the config.")
        updates = [params["update"] for params in wire.updates(session_id)]
    cards = [update for update in updates if update.get("toolCallId", "").startswith("s1/call_ex/")]
    [answer] = [
        update for update in updates if update.get("toolCallId") == "call_ex" and update.get("status") == "completed"
    ]
    assert server.exit_code == 0
    assert answer["content"][0]["content"]["text"] == (
        "I'll help you with that. Let me start by reading some files to understand the current situation."
        " Now I understand the project structure. I need to make some changes to improve it."
        " Perfect! I've successfully updated the configuration. The changes have been applied."
    )
    [request] = asked
    assert request["params"]["sessionId"] == session_id
    assert request["params"]["toolCall"]["toolCallId"] == "s1/call_ex/call_2"
    assert [option["optionId"] for option in request["params"]["options"]] == ["allow", "reject"]
    assert [(card["toolCallId"], card.get("status")) for card in cards] == [
        ("s1/call_ex/call_1", "pending"),
        ("s1/call_ex/call_1", "completed"),
        ("s1/call_ex/call_2", "pending"),
        ("s1/call_ex/call_2", "completed"),
    ]
    assert all(card["_meta"]["claudeCode"] == {"parentToolUseId": "call_ex"} for card in cards)
