"""Small tools and contexts shared by the tools tests."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Scope
from acp_agent.tools import Tool, ToolCallContext, ToolResult


def call_context(call_id: str = "call_1", cwd: Path | None = None) -> ToolCallContext:
    return ToolCallContext(
        call_id=call_id,
        cwd=cwd or Path.cwd(),
        session_id="session-1",
        route="s1",
        scope=Scope(),
        ctx=Context(),
    )


class EchoParams(BaseModel):
    text: str


class EchoTool(Tool[EchoParams]):
    """Returns its argument; the name is per instance so one class serves many tests."""

    description = "Echo the text back."
    Params = EchoParams

    def __init__(self, name: str = "echo", *, concurrency_safe: bool = False) -> None:
        self.name = name
        self.concurrency_safe = concurrency_safe

    async def run(self, params: EchoParams, call: ToolCallContext) -> ToolResult:
        return ToolResult.text(f"{call.call_id}: {params.text}")
