"""The packaged composition with its real model adapter, through the real server process.

The model is a fake OpenAI-compatible server on 127.0.0.1 (see tests/unit/llm/openai_server.py),
or, for the test marked `live`, DeepSeek itself (skipped unless DEEPSEEK_API_KEY is set).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from acp_agent.cli import PACKAGED_CONFIG, packaged
from tests.e2e.wire import Frame, Wire, spawn_server
from tests.unit.llm.openai_server import DONE, Reply, answer, chunk, fake_openai, finish, reasoning, stream, tool, tools

pytestmark = pytest.mark.anyio

ADAPTER = "acp_agent.llm.openai_compat"
DUMMY_KEY = "sk-e2e-dummy-key"


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def result_of(response: Frame) -> Any:
    assert "result" in response, response
    return response["result"]


def error_of(response: Frame) -> tuple[int, str]:
    assert "error" in response, response
    return response["error"]["code"], response["error"]["message"]


def check_stdout(wire: Wire) -> None:
    """Stdout held JSON-RPC 2.0 frames and nothing else."""
    assert wire.garbage == []
    assert all(frame["jsonrpc"] == "2.0" for frame in wire.received)


def message_text(wire: Wire, session_id: str, kind: str = "agent_message_chunk") -> str:
    updates = [u["update"] for u in wire.updates(session_id)]
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


def session_log(sessions: Path, session_id: str) -> list[dict[str, Any]]:
    lines = (sessions / session_id / "session.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def composition(tmp_path: Path, base_url: str, **agents: Any) -> Path:
    """The packaged rows, with the model row pointed at `base_url` (and `agents` in the agents
    row's config)."""
    rows: list[dict[str, Any]] = yaml.safe_load(packaged(PACKAGED_CONFIG).read_text(encoding="utf-8"))
    [model] = [row for row in rows if row["name"] == ADAPTER]
    model["config"].update(baseUrl=base_url, retry={"attempts": 2, "baseDelay": 0})
    [agents_row] = [row for row in rows if row["name"] == "acp_agent.agent.plugin"]
    agents_row["config"].update(agents)
    path = tmp_path / "cordis.yml"
    path.write_text(yaml.safe_dump(rows), encoding="utf-8")
    return path


def test_the_packaged_composition_has_the_adapter_right_after_the_agents_row() -> None:
    rows = yaml.safe_load(packaged(PACKAGED_CONFIG).read_text(encoding="utf-8"))
    names = [row["name"] for row in rows]
    assert names[names.index("acp_agent.agent.plugin") + 1] == ADAPTER
    assert rows[names.index(ADAPTER)]["config"] == {
        "provider": "deepseek",
        "baseUrl": "${DEEPSEEK_BASE_URL:-https://api.deepseek.com}",
        "apiKeyEnv": "DEEPSEEK_API_KEY",
        "pricing": {"input": 0.28, "cachedInput": 0.028, "output": 0.42, "currency": "USD"},
    }


async def test_a_tool_turn_against_an_openai_compatible_server(tmp_path: Path) -> None:
    cwd, sessions = tmp_path / "work", tmp_path / "sessions"
    cwd.mkdir()
    command = "echo E2E_OK > proof.txt && cat proof.txt"
    arguments = json.dumps({"command": command, "description": "Write the proof"})
    first = [
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        reasoning("I will run it."),
        tools(tool(0, "", id="call_00_e2e", name="bash")),
        tools(tool(0, arguments[:20])),
        tools(tool(0, arguments[20:])),
        finish("tool_calls"),
        DONE,
    ]
    replies = [
        Reply.error(429, {"error": {"message": "Rate Limit Reached"}}, Retry_After="0"),
        stream(first),
        stream(answer("Done.")),
    ]
    async with fake_openai(*replies) as server:
        env = {"DEEPSEEK_API_KEY": DUMMY_KEY, "ACP_AGENT_SESSIONS": str(sessions), "ACP_AGENT_MODEL": "deepseek-chat"}
        async with spawn_server(config=composition(tmp_path, server.url), env=env) as wire:
            wire.answer = allow_once  # the packaged composition asks before bash runs
            await wire.request("initialize", {"protocolVersion": 1})
            session_id = result_of(await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["sessionId"]
            notes = {"type": "resource", "resource": {"uri": "file:///p/NOTES.md", "text": "Use bash."}}
            prompt = [text("Prove it."), notes]
            answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
            exit_code = await wire.finish()
    check_stdout(wire)
    assert exit_code == 0
    [asked] = [f["params"] for f in wire.received if f.get("method") == "session/request_permission"]
    assert (asked["sessionId"], asked["toolCall"]["toolCallId"]) == (session_id, "call_00_e2e")
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert (cwd / "proof.txt").read_text() == "E2E_OK\n"  # bash really ran, in the session's cwd
    assert message_text(wire, session_id) == "Done."
    assert message_text(wire, session_id, "agent_thought_chunk") == "I will run it."
    updates = [u["update"] for u in wire.updates(session_id)]
    *asked_then_approved, done = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert [u.get("status") for u in asked_then_approved] == ["pending", "in_progress"]
    assert (done["toolCallId"], done["status"]) == ("call_00_e2e", "completed")
    assert "E2E_OK" in json.dumps(done["content"])

    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {DUMMY_KEY}"] * 3
    second = server.requests[2].body
    assert second["model"] == "deepseek-chat"
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    # An embedded file is part of the user's message, its contents headed by its URI.
    expected = "Prove it.\n[resource file:///p/NOTES.md]\nUse bash.\n[end of resource file:///p/NOTES.md]"
    assert second["messages"][1] == {"role": "user", "content": expected}
    assert second["messages"][2] == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "I will run it.",
        "tool_calls": [{"id": "call_00_e2e", "type": "function", "function": {"name": "bash", "arguments": arguments}}],
    }
    assert second["messages"][3]["tool_call_id"] == "call_00_e2e"
    assert "E2E_OK" in second["messages"][3]["content"]
    assert {tool["function"]["name"] for tool in second["tools"]} >= {"bash", "subagent", "subagent_fork"}

    log = session_log(sessions, session_id)
    [retry] = [event["data"] for event in log if event.get("type") == "llm/retry"]
    assert (retry["code"], retry["status"], retry["attempt"]) == ("RATE_LIMIT", 429, 1)
    assert DUMMY_KEY not in json.dumps(log) and DUMMY_KEY not in wire.stderr_text


async def test_an_html_page_instead_of_a_stream_fails_the_turn_as_a_malformed_response(tmp_path: Path) -> None:
    page = b"<!doctype html><title>Proxy login</title>"
    replies = [Reply(200, [page], content_type="text/html"), stream(answer("Back."))]
    async with fake_openai(*replies) as server:
        env = {"DEEPSEEK_API_KEY": DUMMY_KEY, "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
        async with spawn_server(config=composition(tmp_path, server.url), env=env) as wire:
            await wire.request("initialize", {"protocolVersion": 1})
            session_id = result_of(await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
                "sessionId"
            ]
            failed = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("hi")]})
            again = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("again")]})
    why = "expected an event stream, got text/html: <!doctype html><title>Proxy login</title>"
    assert error_of(failed) == (-32603, f"Internal error: turn failed: {why}")
    assert result_of(again) == {"stopReason": "end_turn"}
    assert len(server.requests) == 2  # not retried: the same page would come back
    ends = [e["data"]["reason"] for e in session_log(tmp_path / "sessions", session_id) if e.get("type") == "turn/end"]
    assert ends[0] == {"kind": "error", "message": why, "code": "MALFORMED_RESPONSE", "step": 1}


async def allow_once(request: dict[str, Any]) -> dict[str, Any]:
    assert request["method"] == "session/request_permission"
    return {
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    }


async def test_without_a_key_the_server_starts_and_a_prompt_asks_for_authentication(tmp_path: Path) -> None:
    env = {"DEEPSEEK_API_KEY": "", "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    async with spawn_server(config=packaged(PACKAGED_CONFIG), env=env) as wire:
        initialized = await wire.request("initialize", {"protocolVersion": 1})
        created = await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        session_id = result_of(created)["sessionId"]
        failed = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("hi")]})
        exit_code = await wire.finish()
    check_stdout(wire)
    assert exit_code == 0
    assert result_of(initialized)["protocolVersion"] == 1
    code, message = error_of(failed)
    assert code == -32000
    base_url = os.environ.get("DEEPSEEK_BASE_URL") or "https://api.deepseek.com"
    assert message == (
        f"Authentication required: no deepseek API key (the model at {base_url} needs one): set the"
        " environment variable DEEPSEEK_API_KEY, or sign in (`acp-agent login`) to store one"
    )


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("DEEPSEEK_API_KEY"), reason="needs DEEPSEEK_API_KEY (a real model call)")
async def test_live_a_real_tool_turn_writes_a_file(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    prompt = (
        "Use the bash tool to run exactly this command: echo LIVE_OK > live.txt\n"
        "Then reply with the single word DONE and stop."
    )
    async with spawn_server(
        config=packaged(PACKAGED_CONFIG), env={"ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    ) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = result_of(await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["sessionId"]
        answered = await wire.request(
            "session/prompt", {"sessionId": session_id, "prompt": [text(prompt)]}, timeout=180
        )
    assert result_of(answered) == {"stopReason": "end_turn"}, wire.stderr_text
    assert (cwd / "live.txt").read_text().strip() == "LIVE_OK"


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


async def test_the_chosen_level_and_an_image_reach_the_adapter_and_a_blind_model_reads_a_note(tmp_path: Path) -> None:
    models = [{"id": "deepseek-chat"}, {"id": "seer", "vision": True, "thoughtLevels": ["low", "high"]}]
    async with fake_openai(stream(answer("A pixel.")), stream(answer("It was a PNG."))) as server:
        config = composition(tmp_path, server.url, models=models)
        env = {
            "DEEPSEEK_API_KEY": DUMMY_KEY,
            "ACP_AGENT_SESSIONS": str(tmp_path / "sessions"),
            "ACP_AGENT_MODEL": "deepseek-chat",
        }
        async with spawn_server(config=config, env=env) as wire:
            initialized = result_of(await wire.request("initialize", {"protocolVersion": 1}))
            assert initialized["agentCapabilities"]["promptCapabilities"]["image"] is True
            session_id = result_of(await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))[
                "sessionId"
            ]
            for config_id, value in [("model", "seer"), ("thought_level", "high")]:
                result_of(
                    await wire.request(
                        "session/set_config_option", {"sessionId": session_id, "configId": config_id, "value": value}
                    )
                )
            image = {"type": "image", "mimeType": "image/png", "data": PIXEL}
            prompts = [[text("What is it?"), image], [text("And now?")]]
            answers = [await wire.request("session/prompt", {"sessionId": session_id, "prompt": prompts[0]})]
            await wire.request(
                "session/set_config_option", {"sessionId": session_id, "configId": "model", "value": "deepseek-chat"}
            )
            answers.append(await wire.request("session/prompt", {"sessionId": session_id, "prompt": prompts[1]}))
            assert await wire.finish() == 0
    check_stdout(wire)
    assert [result_of(a) for a in answers] == [{"stopReason": "end_turn"}] * 2
    seeing, blind = (request.body for request in server.requests)
    assert (seeing["model"], seeing["reasoning_effort"]) == ("seer", "high")
    assert seeing["messages"][1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is it?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
        ],
    }
    assert blind["model"] == "deepseek-chat" and "reasoning_effort" not in blind
    assert blind["messages"][1] == {"role": "user", "content": "What is it?\n[image omitted: image/png]"}


async def test_read_image_shows_the_image_on_the_card_and_sends_it_after_the_tool_message(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "pixel.dat").write_bytes(base64.b64decode(PIXEL))
    call = [tools(tool(0, '{"path": "pixel.dat"}', id="call_img", name="read_image")), finish("tool_calls"), DONE]
    async with fake_openai(stream(call), stream(answer("A red pixel."))) as server:
        config = composition(tmp_path, server.url, models=[{"id": "seer", "vision": True}])
        env = {
            "DEEPSEEK_API_KEY": DUMMY_KEY,
            "ACP_AGENT_SESSIONS": str(tmp_path / "sessions"),
            "ACP_AGENT_MODEL": "seer",
        }
        async with spawn_server(config=config, env=env) as wire:
            await wire.request("initialize", {"protocolVersion": 1})
            session_id = result_of(await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["sessionId"]
            answered = await wire.request(
                "session/prompt", {"sessionId": session_id, "prompt": [text("Look at pixel.dat.")]}
            )
            assert await wire.finish() == 0
    check_stdout(wire)
    assert result_of(answered) == {"stopReason": "end_turn"}
    updates = [u["update"] for u in wire.updates(session_id) if u["update"].get("toolCallId") == "call_img"]
    assert updates[0]["title"] == "Read image pixel.dat" and updates[-1]["status"] == "completed"
    shown = [block["content"] for u in updates for block in u.get("content") or [] if block.get("type") == "content"]
    assert {"type": "image", "mimeType": "image/png", "data": PIXEL} in shown
    url = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
    assert server.requests[1].body["messages"][-2:] == [
        {"role": "tool", "tool_call_id": "call_img", "content": "pixel.dat: image/png, 70 bytes"},
        {"role": "user", "content": [{"type": "text", "text": "[The image(s) returned by tool call call_img:]"}, url]},
    ]
