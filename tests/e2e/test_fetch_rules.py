"""web_fetch's "Always allow fetching from <host>" through the real server: saved for the project
with the command rules, honoured by a new session in the same project and by no other project,
listed and removed with `/permissions`."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_hooks import Run, agent_text, of_type, text
from tests.e2e.wire import Frame, spawn_server
from tests.unit.tools.test_web import serving

pytestmark = pytest.mark.anyio


class Page(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        body = b"served\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def url() -> Iterator[str]:
    with serving(Page) as base:
        yield f"{base}/notes.txt"


def fetch(call_id: str, url: str) -> dict[str, Any]:
    return {"toolCalls": [{"id": call_id, "name": "web_fetch", "arguments": {"url": url}}]}


async def test_always_allow_fetching_from_a_host_is_saved_for_the_project(tmp_path: Path, url: str) -> None:
    done = {"text": "Fetched."}
    script = {
        "s1": [fetch("first", url), done],
        "s2": [fetch("same_project", url), done, fetch("after_removal", url), done],
        "s3": [fetch("elsewhere", url), done],
    }
    run = Run(tmp_path, script, ACP_AGENT_PERMISSIONS="ask")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    answers = {"first": "allow_scope_always", "after_removal": "allow_once", "elsewhere": "reject_once"}
    asked: list[Frame] = []

    async def answer(request: Frame) -> Frame:
        asked.append(request)
        chosen = answers[request["params"]["toolCall"]["toolCallId"]]
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": chosen}},
        }

    async def prompt(session_id: str, words: str) -> None:
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text(words)]})
        assert answered["result"] == {"stopReason": "end_turn"}

    async with spawn_server(config=run.config, env=run.env) as wire:
        wire.answer = answer
        await wire.request("initialize", {"protocolVersion": 1})
        sessions = []
        for cwd in (run.cwd, run.cwd, elsewhere):
            created = await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []})
            sessions.append(created["result"]["sessionId"])
        first, second, other = sessions
        await prompt(first, "Fetch it.")
        await prompt(second, "Fetch it again.")
        await prompt(second, "/permissions")
        listed = agent_text(wire)
        await prompt(second, "/permissions remove 1")
        await prompt(second, "Once more.")
        await prompt(other, "Fetch it from here.")
    assert [request["params"]["toolCall"]["toolCallId"] for request in asked] == ["first", "after_removal", "elsewhere"]
    options = [option["name"] for option in asked[0]["params"]["options"]]
    assert "Always allow fetching from 127.0.0.1" in options
    assert f"Saved rules for {run.cwd} (remove one with /permissions remove <n>):\n" in listed
    assert "1. allow web_fetch calls for `127.0.0.1`" in listed
    assert "Removed: allow web_fetch calls for `127.0.0.1`." in agent_text(wire)
    fetched = {r["callId"]: r for s in (first, second) for r in of_type(run.events(s), "tool/result")}
    assert all(
        fetched[c]["content"][0]["text"].endswith("served\n") for c in ("first", "same_project", "after_removal")
    )
    refused = of_type(run.events(other), "tool/result")
    assert refused[0]["error"]["code"] == "declined"
    assert of_type(run.events(first), "permission/grant") == []  # the project keeps it, not the thread
