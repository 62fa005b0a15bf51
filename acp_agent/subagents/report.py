"""`report`: a background child's interim message to its parent (only background children have it)."""

from __future__ import annotations

from pydantic import Field

from acp_agent.agent.calling import calling_agent
from acp_agent.subagents import texts
from acp_agent.subagents.keys import BACKGROUND
from acp_agent.tools.base import Tool, ToolCallContext, ToolParams, ToolPresentation, ToolResult


class ReportParams(ToolParams):
    message: str = Field(description=texts.REPORT_MESSAGE)


class ReportTool(Tool[ReportParams]):
    name = texts.REPORT_TOOL
    description = texts.REPORT_DESCRIPTION
    Params = ReportParams
    concurrency_safe = True

    def present(self, params: ReportParams) -> ToolPresentation:
        return ToolPresentation(title=texts.REPORT_TOOL, kind="other", content=[params.message])

    async def run(self, params: ReportParams, call: ToolCallContext) -> ToolResult:
        call.ctx.get(BACKGROUND).report(calling_agent(call), params.message)
        return ToolResult.text(texts.REPORT_SENT)
