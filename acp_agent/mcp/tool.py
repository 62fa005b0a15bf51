"""An MCP tool as an agent tool: the server's description and input schema, its annotations as
the card's title and kind, its calls through the session's connection to the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ConfigDict

from acp_agent.llm.request import ToolSchema
from acp_agent.mcp.events import ToolInfo
from acp_agent.tools.base import Tool, ToolCallContext, ToolKind, ToolParams, ToolPresentation, ToolResult

if TYPE_CHECKING:
    from acp_agent.mcp.limits import Limits

META_SERVER = "mcpServer"
META_TOOL = "mcpTool"


class McpArguments(ToolParams):
    """Whatever object the model passes: the server validates its own arguments."""

    model_config = ConfigDict(extra="allow")

    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Caller(Protocol):
    """The connection a tool's calls go through (`connection.Connection`)."""

    async def call(self, tool: str, arguments: dict[str, Any], call: ToolCallContext, limits: Limits) -> ToolResult: ...


class McpTool(Tool[McpArguments]):
    """`info` names it and says how it shows; `caller` is its server's connection (None for a tool
    read back from a log, which only presents past calls)."""

    Params = McpArguments
    concurrency_safe = True

    def __init__(self, info: ToolInfo, caller: Caller | None, limits: Limits) -> None:
        self.info = info
        self.name = info.name
        self.description = info.description
        self.server = info.server
        self.caller = caller
        self.limits = limits
        # Annotations come from the server, which is not trusted: only a deployment that says so
        # lets a read-only tool run without asking.
        self.needs_approval = not (limits.trust_read_only_hint and info.read_only)

    async def run(self, params: McpArguments, call: ToolCallContext) -> ToolResult:
        assert self.caller is not None  # a tool read back from a log is never registered
        return await self.caller.call(self.info.tool, params.arguments(), call, self.limits)

    def present(self, params: McpArguments) -> ToolPresentation:
        return ToolPresentation(
            title=self.info.title or f"{self.info.server}: {self.info.tool}",
            kind=kind_of(self.info),
            name=self.name,
            meta={META_SERVER: self.info.server, META_TOOL: self.info.tool},
        )

    def schema(self) -> ToolSchema:
        return ToolSchema(name=self.name, description=self.description, parameters=self.info.input_schema)


def kind_of(info: ToolInfo) -> ToolKind:
    if info.read_only:
        return "fetch" if info.open_world else "read"
    return "delete" if info.destructive else "other"
