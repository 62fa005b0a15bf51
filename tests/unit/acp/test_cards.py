"""The one tool-call card: the same fields for `tool_call` and `session/request_permission`."""

from __future__ import annotations

from acp_agent.acp.cards import tool_card
from acp_agent.tools import ReadFileTool


def test_the_opening_update_and_the_permission_request_show_one_card() -> None:
    card = tool_card(ReadFileTool(), "read_file", '{"path": "a.txt"}')
    start = card.start("s1/call_1", {"k": 1}).dump()
    asked = card.asked("s1/call_1", {"k": 1}).dump()
    assert start.pop("sessionUpdate") == "tool_call" and start.pop("status") == "in_progress"
    assert start == asked
    assert asked["kind"] == "read" and asked["rawInput"] == {"path": "a.txt"}


def test_unknown_tools_and_invalid_arguments_show_the_name_and_the_raw_text() -> None:
    assert tool_card(None, "mystery", "").asked("c", None).dump() == {
        "toolCallId": "c", "title": "mystery", "kind": "other", "rawInput": {}
    }
    broken = tool_card(ReadFileTool(), "read_file", '{"path": ')
    assert (broken.title, broken.raw_input) == ("read_file", '{"path": ')
    wrong = tool_card(ReadFileTool(), "read_file", '{"nope": 1}')
    assert (wrong.title, wrong.raw_input) == ("read_file", {"nope": 1})
