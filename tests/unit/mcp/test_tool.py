from __future__ import annotations

from acp_agent.mcp.events import ToolInfo
from acp_agent.mcp.limits import Limits
from acp_agent.mcp.tool import McpArguments, McpTool, kind_of


def info(**hints: object) -> ToolInfo:
    return ToolInfo(name="mcp__s__t", server="s", tool="t", description="d", input_schema={"type": "object"}, **hints)  # type: ignore[arg-type]


def test_every_mcp_tool_asks_unless_the_deployment_trusts_a_read_only_hint() -> None:
    trusting = Limits(trust_read_only_hint=True)
    assert McpTool(info(read_only=True), None, Limits()).needs_approval
    assert not McpTool(info(read_only=True), None, trusting).needs_approval
    assert McpTool(info(), None, trusting).needs_approval  # not read-only: asks however trusted


def test_the_card_comes_from_the_title_and_the_hints() -> None:
    assert [kind_of(info(**h)) for h in (
        {}, {"read_only": True}, {"read_only": True, "open_world": True}, {"destructive": True},
    )] == [
        "other", "read", "fetch", "delete",
    ]  # fmt: skip
    tool = McpTool(info(title="Nice title"), None, Limits())
    card = tool.present(McpArguments.model_validate({"q": 1}))
    assert (card.title, card.kind, card.name, card.meta) == (
        "Nice title",
        "other",
        "mcp__s__t",
        {"mcpServer": "s", "mcpTool": "t"},
    )
    assert McpTool(info(), None, Limits()).present(McpArguments()).title == "s: t"


def test_the_model_sees_the_servers_description_and_schema_and_any_object_passes() -> None:
    tool = McpTool(info(), None, Limits())
    schema = tool.schema()
    assert (schema.name, schema.description, schema.parameters) == ("mcp__s__t", "d", {"type": "object"})
    assert McpArguments.model_validate({"a": [1], "b": None}).arguments() == {"a": [1], "b": None}
    assert tool.server == "s" and tool.concurrency_safe
