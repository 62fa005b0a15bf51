"""Claude Code's permission rules (`permissions.allow/deny/ask` of its settings files) in the
permission decision, through the real server: deny first, ask over allow, a project's allow rules
only once it is trusted, and `/permissions` naming each rule's file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_hooks import Run, agent_text, is_trust_question, of_type, open_session, text, write_json
from tests.e2e.wire import Frame, spawn_server

pytestmark = pytest.mark.anyio


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


async def test_settings_rules_decide_calls(tmp_path: Path) -> None:
    calls = [
        call("call_hello", "bash", command="echo hello"),
        call("call_ask", "bash", command="echo ask me"),
        call("call_secret", "read_file", path="secrets/key.txt"),
        call("call_src", "write_file", path="src/a.txt", content="a\n"),
        call("call_other", "write_file", path="other.txt", content="b\n"),
    ]
    script = {"s1": [{"toolCalls": calls}, {"text": "Done."}], "s2": [{"toolCalls": calls[:1]}, {"text": "Done."}]}
    run = Run(tmp_path, script, ACP_AGENT_PERMISSIONS="ask")
    (run.cwd / "secrets").mkdir()
    (run.cwd / "secrets" / "key.txt").write_text("k\n", encoding="utf-8")
    write_json(run.home / ".claude" / "settings.json", {"permissions": {"deny": ["Read(./secrets/**)"]}})
    write_json(run.cwd / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(echo:*)", "Edit(src/**)"]}})
    write_json(run.cwd / ".claude" / "settings.local.json", {"permissions": {"ask": ["Bash(echo ask:*)"]}})
    trust = iter(["allow_once", "reject_once"])
    asked: list[str] = []

    async def answer(request: Frame) -> Frame:
        card = request["params"]["toolCall"]["toolCallId"]
        asked.append(card)
        chosen = next(trust) if is_trust_question(request) else "reject_once"
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": chosen}},
        }

    async with spawn_server(config=run.config, env=run.env) as wire:
        wire.answer = answer
        trusted = await open_session(wire, run.cwd)
        await wire.request("session/prompt", {"sessionId": trusted, "prompt": [text("Go.")]})
        await wire.request("session/prompt", {"sessionId": trusted, "prompt": [text("/permissions")]})
        untrusted = (await wire.request("session/new", {"cwd": str(run.cwd), "mcpServers": []}))["result"]["sessionId"]
        await wire.request("session/prompt", {"sessionId": untrusted, "prompt": [text("Go.")]})
    assert asked == ["trust-1", "call_ask", "call_other", "trust-2", "call_hello"]
    results = {r["callId"]: r for r in of_type(run.events(trusted), "tool/result")}
    assert results["call_hello"]["content"][0]["text"].startswith("hello")
    assert results["call_secret"]["content"][0]["text"] == (
        f"Error: the rule `Read(./secrets/**)` of {run.home / '.claude' / 'settings.json'} "
        "denies this call, so it was not run"
    )
    assert (run.cwd / "src" / "a.txt").read_text() == "a\n" and not (run.cwd / "other.txt").exists()
    assert results["call_ask"]["error"]["code"] == "declined"
    [hello] = of_type(run.events(untrusted), "tool/result")
    assert hello["error"]["code"] == "declined"  # asked: the untrusted project's allow rule does not count
    listing = agent_text(wire)
    assert f"- deny `Read(./secrets/**)` ({run.home / '.claude' / 'settings.json'})" in listing
    assert f"- ask `Bash(echo ask:*)` ({run.cwd / '.claude' / 'settings.local.json'})" in listing
