"""`todo_write`: the plan logged as `todo/update` in the calling agent's session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_agent.agent.keys import AGENTS
from acp_agent.kernel import Row, compose
from acp_agent.session.content import TextContent, ToolCallBlock
from acp_agent.session.errors import InvariantViolation
from acp_agent.session.events import TurnEndEvent
from acp_agent.session.persistence import SESSIONS
from acp_agent.tools import (
    Todo,
    TodoParams,
    TodoUpdateData,
    TodoUpdateEvent,
    TodoWriteTool,
    ToolPresentation,
    ToolRegistry,
    prepare,
)
from acp_agent.tools.todo import TodoUpdateEvent

from .helpers import logged, logged_call

PLAN = [
    {"content": "Bump the version", "status": "completed", "priority": "high"},
    {"content": "Update the changelog", "status": "in_progress"},
    {"content": "Tag the release", "status": "pending", "priority": "low"},
]


@pytest.mark.anyio
async def test_each_call_logs_the_whole_plan_and_tells_the_model(tmp_path: Path) -> None:
    call = logged_call(tmp_path, TodoUpdateEvent)
    tool = TodoWriteTool()
    result = await tool.run(TodoParams.model_validate({"todos": PLAN}), call)
    assert result.plain_text() == "Plan recorded (1 completed, 1 in progress, 1 pending)."
    assert not result.is_error
    [update] = logged(call, "todo/update")
    assert update.dump() == {
        "todos": [
            {"content": "Bump the version", "status": "completed", "priority": "high"},
            {"content": "Update the changelog", "status": "in_progress", "priority": "medium"},
            {"content": "Tag the release", "status": "pending", "priority": "low"},
        ]
    }
    result = await tool.run(TodoParams(todos=[]), call)
    assert result.plain_text() == "Plan recorded: it is empty now."
    assert [data.todos for data in logged(call, "todo/update")][1] == []


def test_arguments_other_todo_tools_send_are_taken_bad_ones_refused() -> None:
    registry = ToolRegistry()
    registry.register(TodoWriteTool())
    extra = {"todos": [{"id": "1", "content": "Do it", "status": "pending", "activeForm": "Doing it"}]}
    prepared = prepare(ToolCallBlock(id="c", name="todo_write", arguments=json.dumps(extra)), registry, None)
    assert prepared.params == TodoParams(todos=[Todo(content="Do it", status="pending")])
    bad = {"todos": [{"content": "Do it", "status": "done"}]}
    error = prepare(ToolCallBlock(id="c", name="todo_write", arguments=json.dumps(bad)), registry, None).error
    assert error is not None and error.plain_text().startswith(
        "Error: invalid arguments for 'todo_write': todos.0.status:"
    )


def test_the_call_shows_the_plan_as_a_checklist() -> None:
    tool = TodoWriteTool()
    assert tool.present(TodoParams.model_validate({"todos": PLAN})) == ToolPresentation(
        title="Update plan",
        kind="think",
        content=["- [x] Bump the version\n- [ ] (in progress) Update the changelog\n- [ ] Tag the release"],
    )
    assert tool.present(TodoParams(todos=[])) == ToolPresentation(title="Update plan", kind="think")


def test_the_event_type_belongs_in_a_turn(tmp_path: Path) -> None:
    call = logged_call(tmp_path, TodoUpdateEvent)
    call.session.append(TurnEndEvent, {"turn": 1, "reason": {"kind": "completed"}})
    with pytest.raises(InvariantViolation, match="turn-enclosed"):
        call.session.append(TodoUpdateEvent, TodoUpdateData(todos=[]))


@pytest.mark.anyio
async def test_through_a_real_agent_the_plan_lands_in_its_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACP_AGENT_SESSIONS", raising=False)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [{"toolCalls": [{"id": "call_plan", "name": "todo_write", "arguments": {"todos": PLAN}}]}, {"text": "ok"}]
        )
    )
    ctx = compose(
        [
            Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path / "sessions")}),
            Row(id="llm", name="acp_agent.llm.service"),
            Row(id="tools", name="acp_agent.tools.plugin"),
            Row(id="agents", name="acp_agent.agent.plugin", config={"provider": "test", "model": "test"}),
            Row(id="todo", name="acp_agent.tools.todo"),
            Row(id="model", name="acp_agent.llm.scripted", config={"script": str(script)}),
        ]
    )
    store = ctx.get(SESSIONS)
    assert store.registry.invariant_class("todo/update") == "turn"
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert (await agent.followup([TextContent(text="plan")]).wait()).kind == "completed"
    kinds = [event.type for event in agent.session.events]
    assert kinds[kinds.index("tool/call") :][:3] == ["tool/call", "todo/update", "tool/result"]
    assert '"type":"todo/update"' in store.path_of(agent.id).read_text()  # persisted like any event
