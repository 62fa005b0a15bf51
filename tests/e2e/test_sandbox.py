"""Commands confined through the real server process: every way out of the writable roots the
sandbox must close is a `bash` call of one prompt, and the test fails if a write lands or the
stored credentials are read; the fail-closed refusal, Full access and escalation (allowed and
rejected) through the wire. Landlock must be offered by the suite's kernel; bubblewrap is tried
where a working `bwrap` is installed and skipped, saying so, elsewhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.sandbox.backends import Backend
from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, spawn_server
from tests.unit.sandbox.test_confinement import ESCAPES as BASE_ESCAPES
from tests.unit.sandbox.test_confinement import backend  # noqa: F401 - the fixture: each backend here

pytestmark = pytest.mark.anyio

SECRET = "sk-stored-0123456789"
ESCAPES = {
    **BASE_ESCAPES,  # each way out the unit tests try under each backend, now through the server
    "daemon": "setsid bash -c 'sleep 0.5; echo x > {out}/late; touch daemon-done' > /dev/null 2>&1 &",
    "job left behind": "(sleep 0.5; echo x > {out}/later; touch job-done) > /dev/null 2>&1 &",
    "credentials": "cat {cfg}/credentials",
}


class Place:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.cwd, self.outside, self.config = tmp_path / "work", tmp_path / "outside", tmp_path / "config"
        for path in (self.cwd, self.outside, self.config):
            path.mkdir()
        (self.outside / "target").write_text("original\n")
        (self.config / "credentials").write_text(SECRET + "\n")

    def env(self, script: Any, **extra: str) -> dict[str, str]:
        (self.root / "script.json").write_text(json.dumps(script), encoding="utf-8")
        return {
            "ACP_AGENT_SCRIPT": str(self.root / "script.json"),
            "ACP_AGENT_SESSIONS": str(self.root / "sessions"),
            "ACP_AGENT_CONFIG": str(self.config),
            **extra,
        }

    def untouched(self) -> bool:
        return (
            sorted(p.name for p in self.outside.iterdir()) == ["target"]
            and (self.outside / "target").read_text() == "original\n"
        )


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def bash(call_id: str, command: str, **more: Any) -> dict[str, Any]:
    return {"id": call_id, "name": "bash", "arguments": {"command": command, **more}}


async def prompt(wire: Wire, cwd: Path, *modes: str) -> tuple[str, dict[str, str]]:
    """Open a session in `cwd` (switched through `modes`), prompt once; the results by call id."""
    await wire.request("initialize", {"protocolVersion": 1})
    session_id = str((await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["result"]["sessionId"])
    for mode in modes:
        assert "result" in await wire.request("session/set_mode", {"sessionId": session_id, "modeId": mode})
    answer = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Go.")]}, timeout=60)
    assert answer["result"] == {"stopReason": "end_turn"}, answer
    return session_id, results(wire)


def results(wire: Wire) -> dict[str, str]:
    out = {}
    for frame in wire.received:
        update = frame.get("params", {}).get("update", {})
        if update.get("sessionUpdate") == "tool_call_update" and update.get("status") in ("completed", "failed"):
            out[update["toolCallId"]] = "".join(
                c["content"].get("text", "") for c in update.get("content", []) if c["type"] == "content"
            )
    return out


async def test_no_command_of_a_confined_session_writes_outside_or_reads_the_credentials(
    tmp_path: Path, backend: Backend
) -> None:
    place = Place(tmp_path)
    calls = [
        bash(f"call_{n}", command.format(out=place.outside, cfg=place.config))
        for n, command in enumerate(ESCAPES.values())
    ]
    # The daemon and the job write after their calls returned: a later call waits for both, in the
    # same session.
    wait = bash(
        "call_wait", "for i in $(seq 100); do [ -e daemon-done ] && [ -e job-done ] && break; sleep 0.05; done; ls"
    )
    script = [{"toolCalls": calls}, {"toolCalls": [wait]}, {"text": "Done."}]
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script, ACP_AGENT_SANDBOX=backend.name)) as wire:
        _, shown = await prompt(wire, place.cwd, "auto")
    assert place.untouched(), sorted(p.name for p in place.outside.iterdir())
    assert (place.config / "credentials").read_text() == SECRET + "\n"
    assert all(SECRET not in result for result in shown.values())
    assert {"daemon-done", "job-done"} <= set(shown["call_wait"].split())  # they ran, confined
    named = shown[f"call_{list(ESCAPES).index('redirect')}"]
    assert (
        f"[sandbox: writing {place.outside}/new is not allowed in workspace-write mode; rerun with escalate: true"
        in named
    )


async def test_without_a_sandbox_confined_modes_refuse_and_full_access_runs(tmp_path: Path) -> None:
    place = Place(tmp_path)
    script = [
        {"toolCalls": [bash("call_a", "touch a")]},
        {"text": "Refused."},
        {"toolCalls": [bash("call_b", "touch b")]},
        {"text": "Ran."},
    ]
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script, ACP_AGENT_SANDBOX="none")) as wire:
        session_id, shown = await prompt(wire, place.cwd, "auto")
        assert shown["call_a"].startswith(
            "Error: commands must run in a sandbox in this mode, and none is available here:"
        )
        assert "choose the Full access mode" in shown["call_a"] and not (place.cwd / "a").exists()
        await wire.request("session/set_mode", {"sessionId": session_id, "modeId": "full"})
        answer = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Again.")]}, timeout=60)
        assert answer["result"] == {"stopReason": "end_turn"}
    assert (place.cwd / "b").exists()


async def test_an_escalation_asks_with_the_justification_and_runs_only_the_allowed_call_unconfined(
    tmp_path: Path,
) -> None:
    place = Place(tmp_path)
    first = bash("call_esc", f"touch {place.outside}/allowed", escalate=True, justification="update the shared cache")
    second = bash("call_no", f"touch {place.outside}/rejected", escalate=True, justification="again")
    script = [{"toolCalls": [first]}, {"toolCalls": [second]}, {"text": "Done."}]
    asked: list[Frame] = []

    async def answer(request: Frame) -> Frame:
        asked.append(request)
        option = "allow_once" if len(asked) == 1 else "reject_once"
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": option}},
        }

    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:
        wire.answer = answer
        _, shown = await prompt(wire, place.cwd, "auto")
    assert (place.outside / "allowed").exists() and not (place.outside / "rejected").exists()
    request = asked[0]["params"]
    assert [o["optionId"] for o in request["options"]] == ["allow_once", "reject_once"]
    assert request["toolCall"]["rawInput"]["justification"] == "update the shared cache"
    assert any("Why: update the shared cache" in json.dumps(c) for c in request["toolCall"]["content"])
    assert shown["call_no"] == "Error: the user declined to run this bash call"
