from __future__ import annotations

import pytest

from acp_agent.session.content import ResourceLink, TextContent
from acp_agent.session.events import ToolError
from acp_agent.tools import Location, ToolPresentation, ToolResult
from acp_agent.tools.base import RAW_OUTPUT_LIMIT, bounded_raw_output

from .helpers import EchoParams, EchoTool, call_context


def test_text_result() -> None:
    result = ToolResult.text("hello")
    assert result.dump() == {"content": [{"type": "text", "text": "hello"}], "isError": False}


def test_failure_result_prefixes_error_and_keeps_code() -> None:
    result = ToolResult.failure("it broke", "broken")
    assert result.dump() == {
        "content": [{"type": "text", "text": "Error: it broke"}],
        "isError": True,
        "error": {"code": "broken", "message": "it broke"},
    }
    assert result.error == ToolError(code="broken", message="it broke")


def test_plain_text_joins_text_blocks_only() -> None:
    result = ToolResult(
        content=[
            TextContent(text="one"),
            ResourceLink(uri="file:///a", name="a"),
            TextContent(text="two"),
        ]
    )
    assert result.plain_text() == "one\ntwo"


def test_presentation_defaults_and_wire_form() -> None:
    assert ToolPresentation(title="t").dump() == {
        "title": "t",
        "kind": "other",
        "content": [],
        "locations": [],
    }
    shown = ToolPresentation(title="t", kind="read", locations=[Location(path="/a", line=3)])
    assert shown.dump()["locations"] == [{"path": "/a", "line": 3}]


def test_tool_defaults() -> None:
    tool = EchoTool()
    assert tool.present(EchoParams(text="x")) == ToolPresentation(title="echo")
    result = ToolResult(content=[TextContent(text="a"), ResourceLink(uri="u", name="n")])
    assert tool.render_result(result) == ["a"]
    schema = tool.schema()
    assert schema.name == "echo"
    assert schema.description == "Echo the text back."
    assert schema.parameters == EchoParams.model_json_schema()
    assert not tool.concurrency_safe


@pytest.mark.anyio
async def test_tool_runs_with_its_call_context() -> None:
    result = await EchoTool().run(EchoParams(text="hi"), call_context("call_9"))
    assert result.plain_text() == "call_9: hi"


def test_a_raw_output_too_large_or_that_cannot_be_written_is_a_note() -> None:
    assert bounded_raw_output(None) is None
    assert bounded_raw_output({"output": "ok", "exitCode": 0}) == {"output": "ok", "exitCode": 0}
    assert (
        bounded_raw_output("x" * RAW_OUTPUT_LIMIT)
        == f"[raw output not shown: {RAW_OUTPUT_LIMIT + 2} bytes, more than {RAW_OUTPUT_LIMIT}]"
    )
    deep: object = "x"
    for _ in range(300):
        deep = [deep]
    assert bounded_raw_output(deep).startswith("[raw output not shown: it cannot be written as JSON (")
    assert bounded_raw_output({"a": "\ud800"}).startswith("[raw output not shown: it cannot be written as JSON (")
