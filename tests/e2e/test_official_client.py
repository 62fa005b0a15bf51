"""The official ACP Python client (`agent-client-protocol`) against the installed server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import (
    AcceptElicitationResponse,
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CreateTerminalResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationFormSessionMode,
    FileSystemCapabilities,
    Implementation,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionInfoUpdate,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.e2e.wire import RECORD_CONFIG
from tests.paths import ROOT

pytestmark = pytest.mark.anyio

COMMAND = "echo OFFICIAL_OK > marker.txt && cat marker.txt && pwd"
SCRIPT = [
    {
        "reasoning": "I will write the marker.",
        "toolCalls": [{"id": "call_echo", "name": "bash", "arguments": {"command": COMMAND, "description": "Mark"}}],
    },
    {"text": "Done: the marker is written."},
]


class RecordingClient:
    """An editor that shows nothing and records every session update it receives."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        raise RequestError.method_not_found("session/request_permission")  # this test grants nothing


def agent_command() -> list[str]:
    """`python -m acp_agent`, run from the repository root like every other server the tests start.

    (The `acp-agent` script would do as well after `pip install -e .`; it finds the package through
    the editable install's finder rather than the working directory.)"""
    return [sys.executable, "-m", "acp_agent", "--config", str(RECORD_CONFIG)]


async def test_the_official_client_runs_a_tool_call_turn(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    client = RecordingClient()
    command, *args = agent_command()
    async with spawn_agent_process(client, command, *args, env=env, cwd=ROOT) as (conn, process):
        initialized = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False)
            ),
            client_info=Implementation(name="official-client-test", version="0"),
        )
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("Write the marker.")])
    assert process.returncode == 0

    assert initialized.protocol_version == PROTOCOL_VERSION
    assert initialized.auth_methods == []
    assert initialized.agent_capabilities is not None and initialized.agent_capabilities.load_session is True
    assert response.stop_reason == "end_turn"
    assert {session_id for session_id, _ in client.updates} == {session.session_id}
    updates = [update for _, update in client.updates]

    thoughts = "".join(u.content.text for u in updates if isinstance(u, AgentThoughtChunk))
    assert thoughts == "I will write the marker."
    (started,) = [u for u in updates if isinstance(u, ToolCallStart)]
    assert started.tool_call_id == "call_echo"
    assert (started.title, started.kind, started.status) == (COMMAND, "execute", "in_progress")
    assert started.raw_input == {"command": COMMAND, "description": "Mark"}
    (progress,) = [u for u in updates if isinstance(u, ToolCallProgress)]
    assert (progress.tool_call_id, progress.status) == ("call_echo", "completed")
    assert progress.content is not None
    (shown,) = [c.content for c in progress.content if c.type == "content"]
    assert isinstance(shown, TextContentBlock)
    assert shown.text == f"```console\nOFFICIAL_OK\n{workspace}\n```"
    assert updates.index(started) < updates.index(progress)
    message = [u for u in updates if isinstance(u, AgentMessageChunk)]
    assert "".join(u.content.text for u in message) == "Done: the marker is written."
    assert updates.index(progress) < updates.index(message[0])
    assert (workspace / "marker.txt").read_text() == "OFFICIAL_OK\n"  # bash really ran, in the session cwd


async def test_the_official_client_lists_loads_resumes_and_closes_a_stored_session(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = tmp_path / "script.json"
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    command, *args = agent_command()
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    first = RecordingClient()
    async with spawn_agent_process(first, command, *args, env=env, cwd=ROOT) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("Write the marker.")])
    script.write_text(json.dumps([{"text": "Resumed."}]), encoding="utf-8")
    client = RecordingClient()
    async with spawn_agent_process(client, command, *args, env=env, cwd=ROOT) as (conn, process):
        initialized = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        listed = await conn.list_sessions(cwd=str(workspace))
        await conn.load_session(cwd=str(workspace), session_id=session.session_id)
        replayed = shown(client.updates)
        await conn.close_session(session_id=session.session_id)
        await conn.resume_session(session_id=session.session_id, cwd=str(workspace))
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("Go on.")])
    assert process.returncode == 0
    capabilities = initialized.agent_capabilities
    assert capabilities is not None and capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.list is not None and capabilities.session_capabilities.close is not None
    assert [(s.session_id, s.title) for s in listed.sessions] == [(session.session_id, "Write the marker.")]
    (said,) = [u for u in replayed if isinstance(u, UserMessageChunk)]
    assert isinstance(said.content, TextContentBlock) and said.content.text == "Write the marker."
    # The same conversation, each block's streamed deltas shown as one chunk.
    assert [u for u in replayed if not isinstance(u, UserMessageChunk)] == coalesced(shown(first.updates))
    assert response.stop_reason == "end_turn"
    # The resume replayed nothing; then "Resumed." and its usage (no title: the session has one).
    assert [type(u) for u in shown(client.updates)[len(replayed) :]] == [AgentMessageChunk, UsageUpdate]
    # Each opening of the session (new; load, then resume) sent its command list once.
    for updates, opened in ((first.updates, 1), (client.updates, 2)):
        lists = [u for _, u in updates if isinstance(u, AvailableCommandsUpdate)]
        assert [[c.name for c in u.available_commands] for u in lists] == [
            ["compact", "init", "permissions", "rename", "sandbox"]
        ] * opened  # no MCP servers: no /mcp


def shown(updates: list[tuple[str, Any]]) -> list[Any]:
    """The updates that show the conversation (the command lists, which come after the answer
    opening a session, left out)."""
    return [update for _, update in updates if not isinstance(update, AvailableCommandsUpdate)]


def coalesced(updates: list[Any]) -> list[Any]:
    """Consecutive message (or thought) chunks merged into one, their texts joined."""
    merged: list[Any] = []
    for update in updates:
        last = merged[-1] if merged else None
        if isinstance(update, (AgentMessageChunk, AgentThoughtChunk)) and type(last) is type(update):
            text = last.content.text + update.content.text
            merged[-1] = last.model_copy(update={"content": last.content.model_copy(update={"text": text})})
        else:
            merged.append(update)
    return merged


class EditorClient(RecordingClient):
    """An editor with unsaved buffers (files held in memory, never on disk) and a terminal that
    runs the command for real when it is created."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers
        self.calls: list[str] = []
        self.terminals: dict[str, tuple[str, int]] = {}

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.calls.append(f"read {Path(path).name}")
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.calls.append(f"write {Path(path).name}")
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, cwd: str | None = None, **kwargs: Any
    ) -> CreateTerminalResponse:
        done = await anyio.run_process([command, *(args or [])], cwd=cwd, check=False, stderr=subprocess.STDOUT)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = (done.stdout.decode(), done.returncode)
        self.calls.append(f"create {terminal_id}")
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(f"wait {terminal_id}")
        return WaitForTerminalExitResponse(exit_code=self.terminals[terminal_id][1])

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        self.calls.append(f"output {terminal_id}")
        output, code = self.terminals[terminal_id]
        return TerminalOutputResponse(output=output, truncated=False, exit_status=TerminalExitStatus(exit_code=code))

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        self.calls.append(f"release {terminal_id}")
        return ReleaseTerminalResponse()


EDITOR_SCRIPT = [
    {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "draft.md"}}]},
    {
        "toolCalls": [
            {
                "id": "call_edit",
                "name": "edit_file",
                "arguments": {"path": "draft.md", "old_text": "draft", "new_text": "final"},
            }
        ]
    },  # fmt: skip
    {"toolCalls": [{"id": "call_ls", "name": "bash", "arguments": {"command": "ls; echo EDITOR_OK"}}]},
    {"text": "Done."},
]


async def test_the_official_client_serves_files_from_its_buffers_and_runs_bash_in_its_terminal(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "on-disk.txt").write_text("x")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(EDITOR_SCRIPT), encoding="utf-8")
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    draft = str(workspace / "draft.md")
    client = EditorClient({draft: "status: draft\n"})
    command, *args = agent_command()
    async with spawn_agent_process(client, command, *args, env=env, cwd=ROOT) as (conn, process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
            ),
        )
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("Finalize the draft.")])
    assert process.returncode == 0
    assert response.stop_reason == "end_turn"
    assert client.calls == [
        "read draft.md", "read draft.md", "write draft.md",
        "create term-1", "wait term-1", "output term-1", "release term-1",
    ]  # fmt: skip
    assert client.buffers[draft] == "status: final\n" and not (workspace / "draft.md").exists()
    updates = [update for _, update in client.updates]
    (title,) = [u for u in updates if isinstance(u, SessionInfoUpdate)]
    assert title.title == "Finalize the draft."
    assert [u.used for u in updates if isinstance(u, UsageUpdate)] == [120] * 4  # the scripted usage
    read_result = next(
        u for u in updates if isinstance(u, ToolCallProgress) and u.tool_call_id == "call_read" and u.status
    )
    assert read_result.content is not None and "status: draft" in str(read_result.content[0])
    bash = [u for u in updates if isinstance(u, ToolCallProgress) and u.tool_call_id == "call_ls"]
    assert [type(c) for u in bash for c in u.content or []] == [TerminalToolCallContent, TerminalToolCallContent]
    assert {c.terminal_id for u in bash for c in u.content or [] if isinstance(c, TerminalToolCallContent)} == {
        "term-1"
    }
    assert client.terminals["term-1"] == ("on-disk.txt\nEDITOR_OK\n", 0)


class AskedClient(RecordingClient):
    """An editor whose user answers the agent's question forms: `answer` for each, recording the
    message and the mode (session, tool call, schema) each came with."""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer
        self.asked: list[tuple[str, Any]] = []

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> AcceptElicitationResponse:
        self.asked.append((message, mode))
        return AcceptElicitationResponse(action="accept", content={"answer": self.answer})


async def test_the_official_client_opens_a_session_with_two_roots_and_answers_the_agents_question(
    tmp_path: Path,
) -> None:
    workspace, library = tmp_path / "app", tmp_path / "textkit"
    workspace.mkdir()
    library.mkdir()
    (library / "textkit.py").write_text("def shout(text):\n    return text.upper()\n")
    question = {"question": "Rename shout() to what?", "options": ["yell", "roar"]}
    edit = {"path": str(library / "textkit.py"), "old_text": "def shout(", "new_text": "def yell("}
    calls = [
        {"toolCalls": [{"id": "call_ask", "name": "ask_user", "arguments": question}]},
        {"toolCalls": [{"id": "call_read", "name": "read_file", "arguments": {"path": str(library / "textkit.py")}}]},
        {"toolCalls": [{"id": "call_edit", "name": "edit_file", "arguments": edit}]},
        {"text": "Renamed it to yell()."},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(calls), encoding="utf-8")
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    client = AskedClient("yell")
    command, *args = agent_command()
    # Question forms are unstable ACP: the client dispatches `elicitation/create` only when asked to.
    spawned = spawn_agent_process(client, command, *args, env=env, cwd=ROOT, use_unstable_protocol=True)
    async with spawned as (conn, process):
        initialized = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
            ),
        )
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[], additional_directories=[str(library)])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("Rename shout().")])
    assert process.returncode == 0
    capabilities = initialized.agent_capabilities
    assert capabilities is not None and capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.additional_directories is not None
    assert response.stop_reason == "end_turn"
    [(message, mode)] = client.asked
    assert message == "Rename shout() to what?"
    assert isinstance(mode, ElicitationFormSessionMode)
    assert (mode.session_id, mode.tool_call_id) == (session.session_id, "call_ask")
    assert mode.requested_schema.model_dump(exclude_none=True)["properties"]["answer"]["enum"] == ["yell", "roar"]
    results = {
        u.tool_call_id: str(u.content[0])
        for _, u in client.updates
        if isinstance(u, ToolCallProgress) and u.status == "completed" and u.content
    }
    assert "The user answered: yell" in results["call_ask"]
    assert "def shout(text):" in results["call_read"]  # a file of the other root, read by its absolute path
    assert (library / "textkit.py").read_text() == "def yell(text):\n    return text.upper()\n"
