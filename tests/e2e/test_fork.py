"""`session/fork` (unstable) through the real server, to the official ACP client: a new thread
seeded with the source's ended turns, its own id and log, listed, loaded with the inherited turns
as its own history; the source untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import UserMessageChunk

from tests.e2e.test_official_client import RecordingClient, agent_command
from tests.paths import ROOT

pytestmark = pytest.mark.anyio


def said(client: RecordingClient, session_id: str) -> list[str]:
    return [u.content.text for s, u in client.updates if s == session_id and isinstance(u, UserMessageChunk)]


def log_of(sessions: Path, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (sessions / session_id / "session.jsonl").read_text().splitlines()]


async def test_a_fork_continues_the_source_history_as_its_own_and_leaves_the_source_alone(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"s1": [{"text": "One."}, {"text": "Two."}], "s2": [{"text": "Three."}]}), encoding="utf-8"
    )
    sessions = tmp_path / "sessions"
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(sessions)}
    command, *args = agent_command()
    client = RecordingClient()
    async with spawn_agent_process(client, command, *args, env=env, cwd=ROOT) as (conn, _):
        initialized = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        source = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        for text in ("one", "two"):
            await conn.prompt(session_id=source, prompt=[text_block(text)])
        source_bytes = (sessions / source / "session.jsonl").read_bytes()
        whole = (await conn.fork_session(session_id=source, cwd=str(workspace))).session_id
        await conn.prompt(session_id=whole, prompt=[text_block("three")])
        first = (await conn.fork_session(session_id=source, cwd=str(workspace), acpAgent={"turns": 1})).session_id
        listed = await conn.list_sessions(cwd=str(workspace))
        refusals = []
        wrong: list[dict[str, Any]] = [
            {"session_id": "nobody"},
            {"session_id": source, "acpAgent": {"turns": 3}},
            {"session_id": source, "acpAgent": {"turns": -1}},
        ]
        for kwargs in wrong:
            with pytest.raises(RequestError) as refused:
                await conn.fork_session(cwd=str(workspace), **kwargs)
            refusals.append(refused.value.code)
    assert (sessions / source / "session.jsonl").read_bytes() == source_bytes  # only read
    capabilities = initialized.agent_capabilities
    assert capabilities is not None and capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.fork is not None
    assert {s.session_id for s in listed.sessions} == {source, whole, first}
    assert refusals == [-32002, -32602, -32602]
    forked = log_of(sessions, whole)
    assert forked[0]["forkedFrom"] == source and "seedLength" not in forked[0]
    assert [e["data"]["turn"] for e in forked if e["type"] == "turn/end"] == [1, 2, 3]  # turns go on
    assert [e["data"]["turn"] for e in log_of(sessions, first) if e["type"] == "turn/end"] == [1]
    loaded = RecordingClient()
    async with spawn_agent_process(loaded, command, *args, env=env, cwd=ROOT) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        stored = (await conn.fork_session(session_id=source, cwd=str(workspace))).session_id  # from its log
        for session_id in (whole, first, source, stored):
            await conn.load_session(cwd=str(workspace), session_id=session_id)
    assert said(loaded, whole) == ["one", "two", "three"]  # the inherited turns as its own history
    assert said(loaded, first) == ["one"]
    assert said(loaded, source) == said(loaded, stored) == ["one", "two"]
