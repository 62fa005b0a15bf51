"""The session's cost through the real server, to the official ACP client: each model call's cost
at its model's prices is logged, `usage_update.cost` carries the running total, and a load
restores it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import UsageUpdate

from tests.e2e.test_official_client import RecordingClient
from tests.e2e.wire import RECORD_CONFIG
from tests.paths import ROOT

pytestmark = pytest.mark.anyio

PRICED = """\
- include: {record}
- id: agents
  config:
    provider: replay
    model: replay
    contextWindow: 100000
    models:
      - {{id: replay, pricing: {{input: 2.0, cachedInput: 0.5, output: 10.0, currency: EUR}}}}
"""
SCRIPT = [
    {"text": "One.", "usage": {"inputTokens": 1000, "outputTokens": 100, "cacheReadTokens": 2000}},
    {"text": "Two.", "usage": {"inputTokens": 500, "outputTokens": 50}},
    {"text": "Three.", "usage": {"inputTokens": 100, "outputTokens": 10}},
]
# One: 1000 x 2 + 2000 x 0.5 + 100 x 10 = 4000 per million; Two: 1000 + 500 = 1500; Three: 200 + 100.
FIRST, SECOND, THIRD = 0.004, 0.0055, 0.0058


def costs(client: RecordingClient) -> list[tuple[float, str] | None]:
    return [
        None if u.cost is None else (round(u.cost.amount, 10), u.cost.currency)
        for _, u in client.updates
        if isinstance(u, UsageUpdate)
    ]


async def test_the_cost_adds_up_over_turns_and_is_restored_by_load(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    config = tmp_path / "priced.yml"
    config.write_text(PRICED.format(record=RECORD_CONFIG), encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    sessions = tmp_path / "sessions"
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(sessions)}
    command = [sys.executable, "-m", "acp_agent", "--config", str(config)]
    live, loaded = RecordingClient(), RecordingClient()
    async with spawn_agent_process(live, *command, env=env, cwd=ROOT) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        for said in ("one", "two"):
            await conn.prompt(session_id=session.session_id, prompt=[text_block(said)])
    script.write_text(json.dumps(SCRIPT[2:]), encoding="utf-8")  # a new process plays its script from the start
    async with spawn_agent_process(loaded, *command, env=env, cwd=ROOT) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(workspace), session_id=session.session_id)
        await conn.prompt(session_id=session.session_id, prompt=[text_block("three")])
    assert costs(live) == [(FIRST, "EUR"), (SECOND, "EUR")]
    assert costs(loaded) == [(FIRST, "EUR"), (SECOND, "EUR"), (THIRD, "EUR")]  # replayed, then on from there
    log = [json.loads(line) for line in (sessions / session.session_id / "session.jsonl").read_text().splitlines()]
    logged = [e["data"]["cost"] for e in log if e.get("type") == "assistant/message"]
    assert logged == [
        {"amount": 0.004, "currency": "EUR"},
        {"amount": 0.0015, "currency": "EUR"},
        {"amount": 0.0003, "currency": "EUR"},
    ]
