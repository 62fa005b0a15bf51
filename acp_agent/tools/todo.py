"""The `todo_write` tool: the agent's plan as a todo list, and the plugin that registers it.

Each call replaces the whole list and logs it as a `todo/update` event in the calling agent's
session (the plugin registers the type, invariant class "turn"); the ACP layer shows a top-level
agent's list as the session's plan.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import ConfigDict, Field

from acp_agent.kernel.context import Context
from acp_agent.kernel.models import Model
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.events import SessionEvent
from acp_agent.session.persistence import SESSIONS
from acp_agent.tools.base import Tool, ToolCallContext, ToolParams, ToolPresentation, ToolResult
from acp_agent.tools.registry import TOOLS

TodoStatus = Literal["pending", "in_progress", "completed"]
TodoPriority = Literal["high", "medium", "low"]

TODO_EVENT: Final = "todo/update"


class Todo(Model):
    """One task of the plan (the field descriptions are model-visible)."""

    # Models used to other todo tools send more fields (an id, a progress form): not an error.
    model_config = ConfigDict(extra="ignore")

    content: str = Field(min_length=1, description="What the task is, in a few words.")
    status: TodoStatus = Field(description="pending, in_progress or completed.")
    priority: TodoPriority = Field(default="medium", description="high, medium or low (default medium).")


class TodoParams(ToolParams):
    """Arguments of todo_write."""

    todos: list[Todo] = Field(description="The whole plan, in order; it replaces the previous one.")


class TodoUpdateData(Model):
    todos: list[Todo]


class TodoUpdateEvent(SessionEvent):
    """`todo/update`: the plan as it now stands, in full."""

    type: Literal["todo/update"] = TODO_EVENT
    data: TodoUpdateData


class TodoWriteTool(Tool[TodoParams]):
    """Records the plan: logs it, and tells the model it did."""

    name = "todo_write"
    description = (
        "Keep the plan for the current task as a todo list the user sees. Send the whole list each "
        "time (it replaces the previous one). Use it for work of three steps or more: write the "
        "plan first, keep exactly one task in_progress while you work on it, and mark each task "
        "completed as soon as it is done."
    )
    Params = TodoParams

    async def run(self, params: TodoParams, call: ToolCallContext) -> ToolResult:
        call.session.append(TodoUpdateEvent, TodoUpdateData(todos=params.todos))
        if not params.todos:
            return ToolResult.text("Plan recorded: it is empty now.")
        counts = ", ".join(
            f"{sum(todo.status == status for todo in params.todos)} {status.replace('_', ' ')}"
            for status in ("completed", "in_progress", "pending")
        )
        return ToolResult.text(f"Plan recorded ({counts}).")

    def present(self, params: TodoParams) -> ToolPresentation:
        return ToolPresentation(
            title="Update plan", kind="think", content=[checklist(params.todos)] if params.todos else []
        )


def checklist(todos: list[Todo]) -> str:
    """The plan as a Markdown checklist (how a child agent's plan shows: only its tool calls reach
    the editor)."""
    marks = {"completed": "- [x] ", "in_progress": "- [ ] (in progress) ", "pending": "- [ ] "}
    return "\n".join(marks[todo.status] + todo.content for todo in todos)


# The plugin: module attributes, as the loader expects.
name = "todo"
inject = ("sessions", "tools")


class Config(PluginConfig):
    """Configuration of the `todo` plugin row (none yet)."""


def apply(ctx: Context, config: Config) -> Disposer:
    """Register the `todo/update` event type and the `todo_write` tool."""
    return combine(
        ctx.get(SESSIONS).registry.register(TodoUpdateEvent, "turn"),
        ctx.get(TOOLS).register(TodoWriteTool()),
    )
