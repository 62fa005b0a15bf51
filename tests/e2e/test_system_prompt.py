"""A client's `systemPrompt` (unstable) through the real server and the real model adapter against
a fake OpenAI-compatible endpoint: what the model's system message holds after `append` and
`override`, what a reopened session holds, what is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from acp_agent.cli import PACKAGED_CONFIG, packaged
from tests.e2e.test_sessions import ADAPTER, Store, error_of, prompt, result_of, store, text  # noqa: F401 (fixture)
from tests.e2e.wire import spawn_server
from tests.paths import ACP_UNSTABLE_SCHEMA
from tests.unit.llm.openai_server import answer, fake_openai, stream

pytestmark = pytest.mark.anyio

APPENDED = "Always answer in French."
OVERRIDE = "You are a terse reviewer. Only list problems."
PERSONA_START = "You are acp-agent"


def composition(store: Store, url: str, *, override: bool) -> Path:
    rows: list[dict[str, Any]] = yaml.safe_load(packaged(PACKAGED_CONFIG).read_text(encoding="utf-8"))
    rows = [row for row in rows if row["id"] != "titles"]  # no title call among the model's requests
    for row in rows:
        if row["name"] == ADAPTER:
            row["config"].update(baseUrl=url, retry={"attempts": 1, "baseDelay": 0})
        if row["id"] == "connection":
            row["config"]["systemPromptOverride"] = override
    config = store.tmp_path / f"cordis-{override}.yml"
    config.write_text(yaml.safe_dump(rows), encoding="utf-8")
    return config


def system_prompt(mode: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"mode": mode, "content": list(blocks)}


def check(definition: str, value: Any) -> None:
    schema = json.loads(ACP_UNSTABLE_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}).validate(value)


async def test_a_client_system_prompt_is_appended_or_overrides_and_is_applied_again_on_load(store: Store) -> None:
    replies = [stream(answer(said)) for said in ("Bien.", "Two problems.", "Plain.")]
    env = {"DEEPSEEK_API_KEY": "sk-test", "ACP_AGENT_SESSIONS": str(store.sessions)}
    async with fake_openai(*replies) as model:
        async with spawn_server(config=composition(store, model.url, override=False), env=env) as wire:
            initialized = await wire.request("initialize", {"protocolVersion": 1})
            appended = system_prompt("append", text(APPENDED))
            params = {"cwd": str(store.cwd), "mcpServers": [], "systemPrompt": appended}
            check("NewSessionRequest", params)
            session_id = result_of(await wire.request("session/new", params))["sessionId"]
            await prompt(wire, session_id, text("Hello."))
            refusals = [
                await wire.request(
                    "session/new", {**params, "systemPrompt": system_prompt("override", text(OVERRIDE))}
                ),
                await wire.request("session/new", {**params, "systemPrompt": system_prompt("append")}),
                await wire.request(
                    "session/new",
                    {
                        **params,
                        "systemPrompt": system_prompt("append", {"type": "image", "mimeType": "image/png", "data": ""}),
                    },
                ),
                await wire.request("session/new", {**params, "systemPrompt": system_prompt("shout", text("!"))}),
            ]
        async with spawn_server(config=composition(store, model.url, override=True), env=env) as wire:
            overriding = await wire.request("initialize", {"protocolVersion": 1})
            load = {
                "sessionId": session_id,
                "cwd": str(store.cwd),
                "mcpServers": [],
                "systemPrompt": system_prompt("override", text(OVERRIDE)),
            }
            result_of(await wire.request("session/load", load))
            await prompt(wire, session_id, text("Review."))
            await wire.request("session/close", {"sessionId": session_id})
            result_of(await wire.request("session/resume", {"sessionId": session_id, "cwd": str(store.cwd)}))
            await prompt(wire, session_id, text("Again."))
    capabilities = [
        r["result"]["agentCapabilities"]["sessionCapabilities"]["systemPrompt"] for r in (initialized, overriding)
    ]
    assert capabilities == [{}, {"mode": {"override": {}}}]
    for capability in capabilities:
        check("SessionSystemPromptCapabilities", capability)
    systems = [request.body["messages"][0]["content"] for request in model.requests]
    assert systems[0].startswith(PERSONA_START) and APPENDED in systems[0] and OVERRIDE not in systems[0]
    assert systems[0].index(APPENDED) > systems[0].index(PERSONA_START)
    assert systems[1].startswith(OVERRIDE) and PERSONA_START not in systems[1] and APPENDED not in systems[1]
    assert systems[2].startswith(PERSONA_START) and OVERRIDE not in systems[2]  # resumed without one: its own
    assert [error_of(r)[0] for r in refusals] == [-32602] * 4
    assert "override" in error_of(refusals[0])[1] and "shout" in error_of(refusals[3])[1]
    logged = [e["data"] for e in store.log(session_id) if e.get("type") == "session/system-prompt"]
    assert logged == [{"mode": "append", "text": APPENDED}, {"mode": "override", "text": OVERRIDE}]
    assert sorted(p.name for p in store.sessions.iterdir() if p.name != ".index") == [session_id]  # refused: none made
