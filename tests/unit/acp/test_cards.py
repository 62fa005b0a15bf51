"""The one tool-call card: the same fields for `tool_call` and `session/request_permission`."""

from __future__ import annotations

from acp_agent.acp.cards import tool_card
from acp_agent.tools import BashTool, ReadFileTool
from acp_agent.tools.base import Diff, Location, ToolPreview


def test_the_opening_update_and_the_permission_request_show_one_card() -> None:
    card = tool_card(ReadFileTool(), "read_file", '{"path": "a.txt"}')
    start = card.start("s1/call_1", {"k": 1}).dump()
    asked = card.asked("s1/call_1", {"k": 1}).dump()
    assert start.pop("sessionUpdate") == "tool_call" and start.pop("status") == "in_progress"
    assert asked.pop("status") == "pending"  # asked about: it waits for the user
    assert start == asked
    assert asked["kind"] == "read" and asked["rawInput"] == {"path": "a.txt"}


def test_unknown_tools_and_invalid_arguments_show_the_name_and_the_raw_text() -> None:
    assert tool_card(None, "mystery", "").asked("c", None).dump() == {
        "toolCallId": "c",
        "title": "mystery",
        "kind": "other",
        "status": "pending",
        "rawInput": {},
    }
    broken = tool_card(ReadFileTool(), "read_file", '{"path": ')
    assert (broken.title, broken.raw_input) == ("read_file", '{"path": ')
    wrong = tool_card(ReadFileTool(), "read_file", '{"nope": 1}')
    assert (wrong.title, wrong.raw_input) == ("read_file", {"nope": 1})


def test_a_permission_request_shows_the_change_after_the_cards_own_content() -> None:
    preview = ToolPreview(
        locations=[Location(path="/w/a.txt", line=2)],
        diffs=[Diff(path="/w/a.txt", old_text="a\nb\n", new_text="a\nc\n")],
        notes=["and a note"],
    )
    card = tool_card(BashTool(), "bash", '{"command": "ls", "description": "List"}')
    asked = card.asked("c", None, preview).dump()
    assert asked["content"] == [
        {"type": "content", "content": {"type": "text", "text": "List"}},
        {"type": "diff", "path": "/w/a.txt", "oldText": "a\nb\n", "newText": "a\nc\n"},
        {"type": "content", "content": {"type": "text", "text": "and a note"}},
    ]
    assert asked["locations"] == [{"path": "/w/a.txt", "line": 2}]
