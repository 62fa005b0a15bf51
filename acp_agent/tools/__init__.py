"""Tools: what they are, which ones an agent may call, how a step's calls run; the `bash` tool."""

from __future__ import annotations

from acp_agent.tools.base import (
    Location,
    Tool,
    ToolCallContext,
    ToolKind,
    ToolPresentation,
    ToolResult,
    ToolSchema,
)
from acp_agent.tools.bash import BashParams, BashTool, CommandOutcome, run_command
from acp_agent.tools.errors import DuplicateTool, ToolsError
from acp_agent.tools.pipeline import PreparedCall, prepare, run_prepared
from acp_agent.tools.registry import ToolRegistry

__all__ = [
    "BashParams",
    "BashTool",
    "CommandOutcome",
    "DuplicateTool",
    "Location",
    "PreparedCall",
    "Tool",
    "ToolCallContext",
    "ToolKind",
    "ToolPresentation",
    "ToolRegistry",
    "ToolResult",
    "ToolSchema",
    "ToolsError",
    "prepare",
    "run_command",
    "run_prepared",
]
