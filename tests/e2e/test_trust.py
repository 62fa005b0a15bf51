"""A project's own hooks run only once the user trusts the project: the question on a card of its
own right after the session opens, the saved answer, `/trust`, and an untrusted project's hooks
ignored with the user told once."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.e2e.test_hooks import HOOK, Run, agent_text, command, of_type, text, write_json
from tests.e2e.wire import Frame, Wire, spawn_server

pytestmark = pytest.mark.anyio


def answering(option: str, asked: list[Frame]) -> object:
    async def answer(request: Frame) -> Frame:
        asked.append(request)
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": option}},
        }

    return answer


async def open_session(wire: Wire, cwd: Path, *, notices: bool = False) -> str:
    capabilities = {"session": {"notices": {}}} if notices else {}
    await wire.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    created = await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(created["result"]["sessionId"])


def card_frames(wire: Wire, card_id: str) -> list[Frame]:
    return [
        frame
        for frame in wire.received
        if frame.get("method") == "session/update" and frame["params"]["update"].get("toolCallId") == card_id
    ]


def project_with_a_guard(run: Run) -> str:
    (run.cwd / "build").mkdir()
    guard = f"{HOOK} deny-rm"
    write_json(
        run.cwd / ".claude" / "settings.json",
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [command(guard)]}]}},
    )
    return guard


async def test_an_untrusted_project_runs_none_of_its_hooks_and_the_user_is_told(tmp_path: Path) -> None:
    script = [
        {"toolCalls": [{"id": "call_rm", "name": "bash", "arguments": {"command": "rm -rf build"}}]},
        {"text": "Removed."},
    ]
    run = Run(tmp_path, script)
    guard = project_with_a_guard(run)
    asked: list[Frame] = []
    async with spawn_server(config=run.config, env=run.env) as wire:
        wire.answer = answering("reject_once", asked)  # type: ignore[assignment]
        session_id = await open_session(wire, run.cwd)
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Clean.")]})
    assert answered["result"] == {"stopReason": "end_turn"}
    assert not (run.cwd / "build").exists() and run.hook_inputs() == []
    [question] = asked
    card = question["params"]["toolCall"]
    assert (card["toolCallId"], card["kind"], card["title"]) == ("trust-1", "other", f"Trust the project {run.cwd}?")
    listed = card["content"][1]["content"]["text"]
    assert listed == f"{run.cwd / '.claude' / 'settings.json'}:\n- `PreToolUse: {guard}`"
    assert [o["optionId"] for o in question["params"]["options"]] == ["allow_once", "allow_always", "reject_once"]
    new_answer = next(
        i for i, f in enumerate(wire.received) if f.get("id") is not None and "sessionId" in f.get("result", {})
    )
    assert wire.received.index(question) > new_answer  # asked after the session/new answer
    assert [f["params"]["update"]["status"] for f in card_frames(wire, "trust-1")] == ["pending", "failed"]
    told = f"The project {run.cwd} is not trusted: its hooks, MCP servers and allow rules are ignored in this session"
    assert agent_text(wire).count(told) == 1
    assert not (run.config_dir / "trusted-projects.json").exists()


async def test_a_saved_trust_holds_for_the_next_session_until_revoked(tmp_path: Path) -> None:
    script = {
        "s1": [
            {"toolCalls": [{"id": "call_rm", "name": "bash", "arguments": {"command": "rm -rf build"}}]},
            {"text": "Refused."},
        ],
        "s2": [
            {"toolCalls": [{"id": "call_rm", "name": "bash", "arguments": {"command": "rm -rf build"}}]},
            {"text": "Refused again."},
        ],
    }
    run = Run(tmp_path, script)
    project_with_a_guard(run)
    asked: list[Frame] = []
    async with spawn_server(config=run.config, env=run.env) as wire:
        wire.answer = answering("allow_always", asked)  # type: ignore[assignment]
        first = await open_session(wire, run.cwd, notices=True)
        await wire.request("session/prompt", {"sessionId": first, "prompt": [text("Clean.")]})
        second = (await wire.request("session/new", {"cwd": str(run.cwd), "mcpServers": []}))["result"]["sessionId"]
        await wire.request("session/prompt", {"sessionId": second, "prompt": [text("Clean again.")]})
        await wire.request("session/prompt", {"sessionId": second, "prompt": [text("/trust")]})
        await wire.request("session/prompt", {"sessionId": second, "prompt": [text("/trust revoke")]})
    assert len(asked) == 1  # the second session found the saved answer
    assert (run.cwd / "build").is_dir()
    assert [r["isError"] for s in (first, second) for r in of_type(run.events(s), "tool/result")] == [True, True]
    saved = run.config_dir / "trusted-projects.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text()) == {"projects": {}}
    said = agent_text(wire)
    assert f"The project {run.cwd} is trusted for good (saved)." in said
    assert f"The saved trust of {run.cwd} is revoked: the next session asks again." in said


async def test_a_question_the_client_cannot_answer_leaves_the_project_untrusted_and_says_so_in_a_notice(
    tmp_path: Path,
) -> None:
    run = Run(tmp_path, [])
    project_with_a_guard(run)
    async with spawn_server(config=run.config, env=run.env) as wire:
        session_id = await open_session(wire, run.cwd, notices=True)
        notice = await wire.wait_for(
            lambda f: f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "notice"
        )
        await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("/trust")]})
    assert notice["params"]["update"]["title"].startswith(f"The project {run.cwd} is not trusted")
    assert f"The project {run.cwd} is not trusted" in agent_text(wire)  # what /trust says
