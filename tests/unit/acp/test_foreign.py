"""What an ACP agent run as a child shows and asks on the connection (`acp/foreign.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_agent.acp.errors import ClientError
from acp_agent.acp.foreign import CANCELLED, ForeignAsker, foreign_update
from acp_agent.acp.updates import ChildOrigin
from tests.unit.acp.test_permission_client import server

pytestmark = pytest.mark.anyio

CARD = ChildOrigin(route="s1/call_a", parent_tool_call_id="call_a")
"""A child shown on its top-level session (no child sessions)."""


class Agent:
    id = "agent-1"


def shown(raw: dict[str, Any], *, text: bool = True) -> dict[str, Any] | None:
    update = foreign_update(raw, CARD.wire_id, CARD.meta(), text=text)
    return None if update is None else update.dump()


def test_text_and_plans_show_when_the_child_has_a_session_of_its_own() -> None:
    chunk = {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}, "_meta": {"x": 1}}
    assert shown(chunk) == {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}}
    plan = {"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "pending"}]}
    assert shown(plan) == plan
    assert shown(chunk, text=False) is None  # under a card the answer is the call's result
    assert shown({"sessionUpdate": "available_commands_update", "availableCommands": []}) is None


def test_tool_calls_take_the_stand_ins_ids_and_meta_and_keep_the_fields_modelled() -> None:
    call = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "rawOutput": 1, "extra": True}
    assert shown(call, text=False) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "s1/call_a/t1",
        "title": "Read",
        "kind": "other",
        "status": "pending",
        "_meta": CARD.meta(),
    }
    done = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "completed",
        "title": "x",
        "rawOutput": {"ok": 1},
    }
    assert shown(done) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "s1/call_a/t1",
        "status": "completed",
        "rawOutput": {"ok": 1},
        "_meta": CARD.meta(),
    }
    assert shown({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "exploded"}) is None
    # A terminal of the child's is one this server ran for it: the editor knows no such terminal.
    said = {"type": "content", "content": {"type": "text", "text": "ran"}}
    ran = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "content": [said, {"type": "terminal", "terminalId": "term-1"}],
    }
    ran_alone = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "content": [ran["content"][1]]}
    assert shown(ran_alone) is None  # nothing else changed: nothing to show
    cleared = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "content": []}
    assert shown(cleared) == {**cleared, "toolCallId": "s1/call_a/t1", "_meta": CARD.meta()}
    assert shown(ran) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "s1/call_a/t1",
        "content": [said],
        "_meta": CARD.meta(),
    }


OPTIONS = [
    {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
    {"optionId": "no", "name": "No", "kind": "reject_once"},
]
ASKED = {"sessionId": "child", "toolCall": {"toolCallId": "t1", "title": "Run", "unknown": 1}, "options": OPTIONS}


async def test_the_user_is_asked_with_the_childs_options_and_the_answer_goes_back() -> None:
    fake = server({"outcome": {"outcome": "selected", "optionId": "yes"}}, CARD)
    assert await ForeignAsker(fake).ask(Agent(), ASKED) == {"outcome": {"outcome": "selected", "optionId": "yes"}}  # type: ignore[arg-type]
    [(method, params)] = fake.conn.sent
    assert method == "session/request_permission"
    assert params == {
        "sessionId": "wire-session",
        "toolCall": {"toolCallId": "s1/call_a/t1", "title": "Run", "_meta": CARD.meta()},
        "options": OPTIONS,
    }


@pytest.mark.parametrize(
    "answer",
    [
        {"outcome": {"outcome": "cancelled"}},
        {"outcome": {"outcome": "selected", "optionId": "maybe"}},  # not offered
        {"outcome": "yes"},  # not an outcome
        ClientError(-32603, "broken"),
    ],
)
async def test_whatever_is_not_the_users_pick_of_an_offered_option_is_cancelled(answer: Any) -> None:
    fake = server(answer, CARD)
    assert await ForeignAsker(fake).ask(Agent(), ASKED) == CANCELLED  # type: ignore[arg-type]


async def test_a_request_that_cannot_be_shown_is_cancelled_without_asking() -> None:
    fake = server({"outcome": {"outcome": "selected", "optionId": "yes"}}, CARD)
    bad = {**ASKED, "options": [{"optionId": "yes", "kind": "perhaps"}]}
    assert await ForeignAsker(fake).ask(Agent(), bad) == CANCELLED  # type: ignore[arg-type]

    class Stranger:
        id = "someone-else"

    assert await ForeignAsker(fake).ask(Stranger(), ASKED) == CANCELLED  # type: ignore[arg-type]
    assert fake.conn.sent == []
