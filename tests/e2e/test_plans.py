"""Plan operations through the real server, to the official ACP client: a client advertising
`plan` gets `plan_update` / `plan_removed` for the session's one plan (its todo list), live and
when the session is loaded; a client that does not gets the whole `plan` each time."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    ClientCapabilities,
    PlanCapabilities,
)

from tests.e2e.test_official_client import RecordingClient, agent_command
from tests.paths import ROOT

pytestmark = pytest.mark.anyio

TODOS = [
    {"content": "Bump VERSION", "status": "in_progress", "priority": "high"},
    {"content": "Tag it", "status": "pending"},
]
SCRIPT = [
    {"toolCalls": [{"id": "call_plan", "name": "todo_write", "arguments": {"todos": TODOS}}]},
    {"text": "Planned."},
    {"toolCalls": [{"id": "call_clear", "name": "todo_write", "arguments": {"todos": []}}]},
    {"text": "Cleared."},
]


def plans(client: RecordingClient) -> list[Any]:
    kinds = (AgentPlanUpdate, AgentPlanContentUpdate, AgentPlanRemovedUpdate)
    return [update for _, update in client.updates if isinstance(update, kinds)]


async def test_a_client_advertising_plan_gets_plan_operations_live_and_on_load(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    command, *args = agent_command()
    live = RecordingClient()
    with_plans = ClientCapabilities(plan=PlanCapabilities())
    async with spawn_agent_process(live, command, *args, env=env, cwd=ROOT) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=with_plans)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("Plan it.")])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("Drop the plan.")])
    loaded, plain = RecordingClient(), RecordingClient()
    for client, capabilities in ((loaded, with_plans), (plain, ClientCapabilities())):
        async with spawn_agent_process(client, command, *args, env=env, cwd=ROOT) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
            await conn.load_session(cwd=str(workspace), session_id=session.session_id)

    updated, removed = plans(live)
    assert isinstance(updated, AgentPlanContentUpdate) and updated.plan.type == "items"
    assert updated.plan.plan_id == "todos"
    assert [(e.content, e.status, e.priority) for e in updated.plan.entries] == [
        ("Bump VERSION", "in_progress", "high"),
        ("Tag it", "pending", "medium"),
    ]
    assert isinstance(removed, AgentPlanRemovedUpdate) and removed.plan_id == "todos"
    assert plans(loaded) == plans(live)  # the load replays the same operations
    whole, empty = plans(plain)  # the whole plan each time, an empty one when cleared
    assert isinstance(whole, AgentPlanUpdate) and whole.entries == updated.plan.entries
    assert isinstance(empty, AgentPlanUpdate) and empty.entries == []
