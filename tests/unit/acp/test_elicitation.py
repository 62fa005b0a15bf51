"""`elicitation/create`: the form a question becomes, and what each reply means."""

from __future__ import annotations

from typing import Any

import pytest

from acp_agent.acp.elicitation import AcpQuestions, form_schema
from acp_agent.acp.errors import ClientError
from acp_agent.acp.schema import ClientCapabilities
from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.acp.wire import AgentWire
from acp_agent.tools.questions import AskFailed, AskUserParams, AskUserTool, Reply
from tests.unit.acp.test_permission_client import FakeConnection, FakeWire
from tests.unit.tools.helpers import call_context

pytestmark = pytest.mark.anyio

TEXT = AskUserParams(question="Which colour?")
ONE = AskUserParams(question="Which?", options=["x", "y"])
SOME = AskUserParams(question="Which?", options=["x", "y"], multi_select=True)


def client(answer: Any, origin: ChildOrigin | None = None) -> FakeWire:
    wire = FakeWire(FakeConnection(answer))  # type: ignore[arg-type]
    wire.show("session-1", AgentWire("wire-session", UpdateMapper(lambda name: None, origin)))
    return wire


def test_a_client_elicits_when_it_advertised_forms() -> None:
    assert ClientCapabilities.model_validate({"elicitation": {"form": {}}}).elicits
    for said in ({}, {"elicitation": {"url": {}}}, {"elicitation": {"form": None}}):
        assert not ClientCapabilities.model_validate(said).elicits


def test_the_form_has_one_required_field_shaped_by_the_options() -> None:
    assert form_schema(TEXT)["properties"] == {"answer": {"type": "string", "title": "Answer"}}
    assert form_schema(ONE)["properties"]["answer"] == {"type": "string", "title": "Answer", "enum": ["x", "y"]}
    assert form_schema(SOME)["properties"]["answer"]["items"] == {"type": "string", "enum": ["x", "y"]}
    # multi_select without options: still one typed answer
    assert form_schema(AskUserParams(question="?", multi_select=True))["properties"]["answer"]["type"] == "string"


@pytest.mark.parametrize(
    ("question", "raw", "reply"),
    [
        (TEXT, {"action": "accept", "content": {"answer": "blue"}}, Reply(action="accept", answer="blue")),
        (SOME, {"action": "accept", "content": {"answer": []}}, Reply(action="accept", answer=[])),
        (TEXT, {"action": "accept"}, Reply(action="accept")),
        (TEXT, {"action": "decline", "_meta": {}}, Reply(action="decline")),
        (ONE, {"action": "cancel"}, Reply(action="cancel")),
    ],
)
async def test_a_reply_is_read_as_the_schema_says(question: AskUserParams, raw: Any, reply: Reply) -> None:
    wire = client(raw, ChildOrigin(route="s1", parent_tool_call_id="p", own_session=False))
    assert await AcpQuestions(wire).ask(call_context(), question) == reply
    [(method, params)] = wire.conn.sent
    assert (method, params["sessionId"], params["toolCallId"]) == ("elicitation/create", "wire-session", "s1/call_1")


@pytest.mark.parametrize(
    ("question", "raw", "why"),
    [
        (TEXT, None, "no action this agent knows (None)"),
        (TEXT, {"action": "_later"}, "no action this agent knows ('_later')"),
        (TEXT, {"action": "accept", "content": {"answer": 3}}, "the editor's reply is not text"),
        (ONE, {"action": "accept", "content": {"answer": "z"}}, "not one of the options offered"),
        (SOME, {"action": "accept", "content": {"answer": "x"}}, "not a list of the options offered"),
        (SOME, {"action": "accept", "content": {"answer": ["x", "z"]}}, "not a list of the options offered"),
        (TEXT, ClientError(-32601, "Method not found"), "Method not found"),
        (TEXT, ClientError(-32000, ""), "the editor answered error -32000"),
    ],
)
async def test_a_reply_that_does_not_fit_fails_the_call_saying_why(question: AskUserParams, raw: Any, why: str) -> None:
    result = await AskUserTool(AcpQuestions(client(raw))).run(question, call_context())
    assert result.is_error and result.error is not None and result.error.code == "ask_failed"
    assert why in result.plain_text()


async def test_an_agent_not_shown_here_is_not_asked() -> None:
    wire = FakeWire(FakeConnection({"action": "decline"}))  # type: ignore[arg-type]
    with pytest.raises(AskFailed, match="not open on this connection"):
        await AcpQuestions(wire).ask(call_context(), TEXT)
    assert wire.conn.sent == []
