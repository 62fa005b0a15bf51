"""Tools: what they are, which ones an agent may call, how a step's calls run; the built-in tools
(`bash`, the file tools, `todo_write`)."""

from __future__ import annotations

from acp_agent.llm.request import ToolSchema
from acp_agent.tools.base import (
    DISPLAY_EVENT,
    Diff,
    Location,
    Tool,
    ToolCallContext,
    ToolDisplayData,
    ToolDisplayEvent,
    ToolKind,
    ToolPresentation,
    ToolResult,
    code_block,
)
from acp_agent.tools.bash import LOCAL, BashParams, BashTool, LocalRunner, run_command, runner_for
from acp_agent.tools.confined import Target, resolve_in
from acp_agent.tools.errors import CommandNotStarted, DuplicateTool, NotOwned, OutsideWorkspace, ToolsError
from acp_agent.tools.files import (
    EditFileParams,
    EditFileTool,
    ReadFileParams,
    ReadFileTool,
    WriteFileParams,
    WriteFileTool,
)
from acp_agent.tools.pipeline import PreparedCall, prepare, run_prepared
from acp_agent.tools.registry import ToolRegistry
from acp_agent.tools.runner import RUNNER_SERVICE, CommandOutcome, CommandRunner, RunnerProvider
from acp_agent.tools.todo import TODO_EVENT, Todo, TodoParams, TodoUpdateData, TodoUpdateEvent, TodoWriteTool
from acp_agent.tools.workspace import WORKSPACE_SERVICE, DiskWorkspace, Workspace, WorkspaceProvider, workspace_for

__all__ = [
    "DISPLAY_EVENT",
    "LOCAL",
    "RUNNER_SERVICE",
    "TODO_EVENT",
    "WORKSPACE_SERVICE",
    "BashParams",
    "BashTool",
    "CommandNotStarted",
    "CommandOutcome",
    "CommandRunner",
    "Diff",
    "DiskWorkspace",
    "DuplicateTool",
    "EditFileParams",
    "EditFileTool",
    "LocalRunner",
    "Location",
    "NotOwned",
    "OutsideWorkspace",
    "PreparedCall",
    "ReadFileParams",
    "ReadFileTool",
    "RunnerProvider",
    "Target",
    "Todo",
    "TodoParams",
    "TodoUpdateData",
    "TodoUpdateEvent",
    "TodoWriteTool",
    "Tool",
    "ToolCallContext",
    "ToolDisplayData",
    "ToolDisplayEvent",
    "ToolKind",
    "ToolPresentation",
    "ToolRegistry",
    "ToolResult",
    "ToolSchema",
    "ToolsError",
    "Workspace",
    "WorkspaceProvider",
    "WriteFileParams",
    "WriteFileTool",
    "code_block",
    "prepare",
    "resolve_in",
    "run_command",
    "run_prepared",
    "runner_for",
    "workspace_for",
]
