"""`UpdateMapper` for the file tools and the plan: `tool/display` events become locations and
`diff` content that stays once the result is in, `todo/update` becomes a full `plan` update. Each
update is held against the official package's model and, when present, the protocol's schema."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from acp import schema as official
from jsonschema import Draft202012Validator

from acp_agent.acp.schema import SessionNotification
from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.session.content import TextContent
from acp_agent.session.events import SessionEvent, ToolCallData, ToolCallEvent, ToolResultData, ToolResultEvent
from acp_agent.tools import (
    Diff,
    EditFileTool,
    Location,
    ReadFileTool,
    Todo,
    TodoUpdateData,
    TodoUpdateEvent,
    TodoWriteTool,
    Tool,
    ToolDisplayData,
    ToolDisplayEvent,
    WriteFileTool,
)
from tests.paths import ACP_SCHEMA

TOOLS: dict[str, Tool[Any]] = {
    tool.name: tool for tool in (ReadFileTool(), WriteFileTool(), EditFileTool(), TodoWriteTool())
}
CHILD = ChildOrigin(route="s1/call_spawn", parent_tool_call_id="call_spawn")


@cache
def validator() -> Draft202012Validator:
    defs = json.loads(ACP_SCHEMA.read_text(encoding="utf-8"))["$defs"]
    return Draft202012Validator({"$ref": "#/$defs/SessionNotification", "$defs": defs})


def wire(update: Any) -> dict[str, Any]:
    """The update as it goes out, checked against the official model and the JSON Schema."""
    assert update is not None
    params = SessionNotification(session_id="s", update=update).dump()
    parsed = official.SessionNotification.model_validate(params)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == params
    assert [error.message for error in validator().iter_errors(params)] == []
    return dict(params["update"])


def call(call_id: str, name: str, arguments: dict[str, Any]) -> SessionEvent:
    data = ToolCallData(turn=1, step=1, call_id=call_id, name=name, arguments=json.dumps(arguments))
    return ToolCallEvent(seq=0, time=0, data=data)


def display(call_id: str, locations: list[Location] | None = None, diffs: list[Diff] | None = None) -> SessionEvent:
    return ToolDisplayEvent(seq=0, time=0, data=ToolDisplayData(call_id=call_id, locations=locations, diffs=diffs))


def result(call_id: str, text: str, *, error: bool = False) -> SessionEvent:
    data = ToolResultData(turn=1, step=1, call_id=call_id, content=[TextContent(text=text)], is_error=error)
    return ToolResultEvent(seq=0, time=0, data=data)


def plan(*todos: Todo) -> SessionEvent:
    return TodoUpdateEvent(seq=0, time=0, data=TodoUpdateData(todos=list(todos)))


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def test_a_read_shows_its_location_while_running_then_its_lines() -> None:
    m = UpdateMapper(TOOLS.get)
    assert wire(m.map(call("c1", "read_file", {"path": "a.py", "offset": 3}))) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "Read a.py (from line 3)",
        "kind": "read",
        "status": "in_progress",
        "rawInput": {"path": "a.py", "offset": 3},
    }
    assert wire(m.map(display("c1", locations=[Location(path="/w/a.py", line=3)]))) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "locations": [{"path": "/w/a.py", "line": 3}],
    }
    assert wire(m.map(result("c1", "     3\tx = 1")))["content"] == [text("```\n     3\tx = 1\n```")]


def test_an_edit_shows_its_diff_and_keeps_it_after_the_result() -> None:
    m = UpdateMapper(TOOLS.get)
    started = wire(m.map(call("c1", "edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"})))
    assert (started["title"], started["kind"]) == ("Edit a.py", "edit")
    diff = Diff(path="/w/a.py", old_text="x = 1\n", new_text="x = 2\n")
    shown = {"type": "diff", "path": "/w/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
    assert wire(m.map(display("c1", [Location(path="/w/a.py", line=1)], [diff]))) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "content": [shown],
        "locations": [{"path": "/w/a.py", "line": 1}],
    }
    done = wire(m.map(result("c1", "Edited a.py: replaced 1 occurrence at line 1.")))
    assert done["status"] == "completed"
    assert done["content"] == [text("Edited a.py: replaced 1 occurrence at line 1."), shown]
    assert "locations" not in done  # the ones shown stay
    # The call is over: a late result under the same id (never in a valid log) brings no diff back.
    assert wire(m.map(result("c1", "again")))["content"] == [text("again")]


def test_a_new_file_has_no_old_text_and_every_diff_shown_stays() -> None:
    m = UpdateMapper(TOOLS.get)
    m.map(call("c1", "write_file", {"path": "new.py", "content": "x\n"}))
    first = wire(m.map(display("c1", diffs=[Diff(path="/w/new.py", new_text="x\n")])))
    assert first["content"] == [{"type": "diff", "path": "/w/new.py", "newText": "x\n"}]
    assert "locations" not in first
    second = wire(m.map(display("c1", diffs=[Diff(path="/w/b.py", old_text="", new_text="y")])))
    assert [item["path"] for item in second["content"]] == ["/w/new.py", "/w/b.py"]
    assert wire(m.map(display("c1", locations=[Location(path="/w/b.py")]))).get("content") is None
    failed = wire(m.map(result("c1", "Error: disk full", error=True)))
    assert failed["status"] == "failed"
    assert failed["content"] == [text("Error: disk full"), *second["content"]]


def test_each_plan_change_is_the_whole_plan() -> None:
    m = UpdateMapper(TOOLS.get)
    started = wire(m.map(call("c1", "todo_write", {"todos": [{"content": "A", "status": "pending"}]})))
    assert (started["title"], started["kind"], started["content"]) == ("Update plan", "think", [text("- [ ] A")])
    assert wire(
        m.map(plan(Todo(content="A", status="in_progress", priority="high"), Todo(content="B", status="pending")))
    ) == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "A", "priority": "high", "status": "in_progress"},
            {"content": "B", "priority": "medium", "status": "pending"},
        ],
    }
    assert wire(m.map(plan())) == {"sessionUpdate": "plan", "entries": []}


def test_a_childs_display_reaches_the_parent_session_but_its_plan_does_not() -> None:
    m = UpdateMapper(TOOLS.get, CHILD)
    m.map(call("c1", "write_file", {"path": "n.py", "content": ""}))
    shown = wire(m.map(display("c1", [Location(path="/w/n.py")], [Diff(path="/w/n.py", new_text="")])))
    assert shown["toolCallId"] == "s1/call_spawn/c1"
    assert shown["_meta"] == {
        "acpAgent": {"route": "s1/call_spawn", "parentToolCallId": "call_spawn"},
        "claudeCode": {"parentToolUseId": "call_spawn"},
    }
    assert m.map(plan(Todo(content="A", status="pending"))) is None


@pytest.mark.parametrize("name", ["read_file", "write_file", "edit_file", "todo_write"])
def test_arguments_a_tool_cannot_take_still_show(name: str) -> None:
    update = wire(UpdateMapper(TOOLS.get).map(call("c1", name, {"nope": 1})))
    assert (update["title"], update["kind"]) == (name, "other")
