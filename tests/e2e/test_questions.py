"""`ask_user` through the real server: offered to a client that answers forms, never to one that
does not nor to a child; the user's answer, refusal or dismissal is the call's result; a cancel
while the form is open withdraws it and the prompt answers `cancelled`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator

from acp_agent.tools.texts import CANNOT_ASK
from tests.e2e.test_sandbox import Place, results, text
from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, spawn_server
from tests.paths import ACP_UNSTABLE_SCHEMA

pytestmark = pytest.mark.anyio

FORMS = {"elicitation": {"form": {}}}


def ask(call_id: str, question: str, **more: Any) -> dict[str, Any]:
    return {"id": call_id, "name": "ask_user", "arguments": {"question": question, **more}}


def valid_elicitation(params: Any) -> list[str]:
    defs = json.loads(ACP_UNSTABLE_SCHEMA.read_text())["$defs"]
    validator = Draft202012Validator({"$defs": defs, "$ref": "#/$defs/CreateElicitationRequest"})
    return [error.message for error in validator.iter_errors(params)]


async def start(wire: Wire, place: Place, capabilities: dict[str, Any]) -> str:
    await wire.request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    answer = await wire.request("session/new", {"cwd": str(place.cwd), "mcpServers": []})
    return str(answer["result"]["sessionId"])


async def test_the_users_answer_refusal_or_dismissal_is_the_calls_result(tmp_path: Path) -> None:
    place = Place(tmp_path)
    script = {
        "s1": [
            {
                "toolCalls": [
                    ask("typed", "Which colour?"),
                    ask("picked", "Which files?", options=["a.py", "b.py", "c.py"], multi_select=True),
                    ask("one", "Which one?", options=["x", "y"]),
                    ask("declined", "May I?"),
                    ask("dismissed", "Really?"),
                    ask("off", "Which?", options=["x"]),
                ]
            },
            {"toolCalls": [{"id": "spawn", "name": "subagent", "arguments": {"description": "d", "prompt": "p"}}]},
            {"text": "Done."},
        ],
        "s1/spawn": [{"toolCalls": [ask("child", "Child?")]}, {"text": "I would ask: Child?"}],
    }
    replies = {
        "Which colour?": {"action": "accept", "content": {"answer": "blue"}},
        "Which files?": {"action": "accept", "content": {"answer": ["a.py", "c.py"]}},
        "Which one?": {"action": "accept", "content": {"answer": "y"}},
        "May I?": {"action": "decline"},
        "Really?": {"action": "cancel"},
        "Which?": {"action": "accept", "content": {"answer": "not offered"}},
    }
    asked: list[Frame] = []

    async def answer(request: Frame) -> Frame:
        asked.append(request)
        return {"jsonrpc": "2.0", "id": request["id"], "result": replies[request["params"]["message"]]}

    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:
        wire.answer = answer
        session_id = await start(wire, place, FORMS)
        done = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Go.")]}, timeout=60)
        assert done["result"] == {"stopReason": "end_turn"}, done
        shown = results(wire)
    assert [request["method"] for request in asked] == ["elicitation/create"] * 6  # none for the child
    first = asked[0]["params"]
    assert first == {
        "sessionId": session_id,
        "toolCallId": "typed",
        "mode": "form",
        "message": "Which colour?",
        "requestedSchema": {
            "type": "object",
            "properties": {"answer": {"type": "string", "title": "Answer"}},
            "required": ["answer"],
        },
    }
    assert asked[1]["params"]["requestedSchema"]["properties"]["answer"] == {
        "type": "array",
        "title": "Answers",
        "items": {"type": "string", "enum": ["a.py", "b.py", "c.py"]},
    }
    assert asked[2]["params"]["requestedSchema"]["properties"]["answer"]["enum"] == ["x", "y"]
    assert all(valid_elicitation(request["params"]) == [] for request in asked)
    assert shown["typed"] == "The user answered: blue"
    assert shown["picked"] == "The user picked: a.py, c.py"
    assert shown["one"] == "The user answered: y"
    assert shown["declined"] == "The user declined to answer the question."
    assert shown["dismissed"] == "The user dismissed the question without answering."
    assert shown["off"] == (
        "Error: the question could not be asked: the editor's reply is not one of the options offered"
    )
    assert "ask_user" in shown["s1/spawn/child"]  # the child has no such tool: it says so
    assert not shown["s1/spawn/child"].startswith("The user")


async def test_a_cancel_while_the_form_is_open_withdraws_it_and_the_prompt_answers_cancelled(tmp_path: Path) -> None:
    place = Place(tmp_path)
    script = [{"toolCalls": [ask("waits", "Which colour?")]}, {"text": "Never."}]
    asked = anyio.Event()
    pending: list[Frame] = []

    async def answer(request: Frame) -> None:
        pending.append(request)
        asked.set()  # left unanswered: the user has the form open

    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:
        wire.answer = answer
        session_id = await start(wire, place, FORMS)
        prompt = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Go.")]})
        with anyio.fail_after(10):
            await asked.wait()
        await wire.notify("session/cancel", {"sessionId": session_id})
        assert (await wire.response(prompt))["result"] == {"stopReason": "cancelled"}
        withdrawn = await wire.wait_for(lambda frame: frame.get("method") == "$/cancel_request")
        await wire.send({"jsonrpc": "2.0", "id": pending[0]["id"], "result": {"action": "decline"}})  # too late
        listed = await wire.request("session/list", {})
    assert withdrawn["params"] == {"requestId": pending[0]["id"]}
    assert "result" in listed  # the late answer was dropped; the server serves on
    assert results(wire)["waits"] == "Error: the turn was cancelled before this call finished"


async def test_a_client_without_forms_is_not_offered_the_tool(tmp_path: Path) -> None:
    place = Place(tmp_path)
    script = [{"toolCalls": [ask("q", "Which colour?")]}, {"text": "Done."}]
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:
        session_id = await start(wire, place, {"elicitation": {"url": {}}})  # URL mode only: not used
        done = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Go.")]})
        assert done["result"] == {"stopReason": "end_turn"}
        assert not [frame for frame in wire.received if frame.get("method") == "elicitation/create"]
        assert results(wire)["q"] == f"Error: {CANNOT_ASK}"


async def test_a_child_that_asks_is_told_to_put_the_question_in_its_answer(tmp_path: Path) -> None:
    place = Place(tmp_path)
    child = {"id": "kid", "name": "subagent", "arguments": {"description": "Pick", "prompt": "Pick a colour."}}
    script = {
        "s1": [{"toolCalls": [child]}, {"text": "Done."}],
        "s1/kid": [{"toolCalls": [ask("q", "Which colour?")]}, {"text": "Which colour do you want?"}],
    }
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:
        session_id = await start(wire, place, FORMS)
        done = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Go.")]})
    assert done["result"] == {"stopReason": "end_turn"}
    assert not [frame for frame in wire.received if frame.get("method") == "elicitation/create"]
    asked = [said for call_id, said in results(wire).items() if call_id.endswith("q")]
    assert asked == [f"Error: {CANNOT_ASK}"]
