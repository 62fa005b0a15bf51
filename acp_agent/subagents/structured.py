"""Structured output: a child reports its answer by calling `structured_output` exactly once.

Everything lives in the child's scope: the tool (with the requested schema), the order-190
instruction, the guard that refuses every call once the value is recorded. The value is staged
when the call validates and committed only when that call's logged result succeeds; the result
ends the turn, so no model call follows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import RootModel

from acp_agent.agent.keys import PROMPT
from acp_agent.agent.prompt import Section
from acp_agent.llm.request import ToolSchema
from acp_agent.session.content import TextContent
from acp_agent.session.events import SessionEvent
from acp_agent.subagents import texts
from acp_agent.subagents.errors import UnsupportedSchema
from acp_agent.tools.base import Tool, ToolCallContext, ToolResult
from acp_agent.tools.pipeline import PreparedCall
from acp_agent.tools.registry import TOOLS

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

SCHEMA_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
SCHEMA_KEYWORDS = {"type", "properties", "required", "items", "enum", "description", "title", "additionalProperties"}


def check_schema(schema: Any) -> None:
    """Refuse, before any child exists, a schema outside the supported subset (see README)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise UnsupportedSchema('a structured output schema must be an object schema (`"type": "object"`)')
    for path, node in _nodes(schema, "#"):
        for keyword in node:
            if keyword not in SCHEMA_KEYWORDS:
                raise UnsupportedSchema(f"structured output schema uses unsupported keyword {keyword!r} at {path}")
        kinds = node.get("type")
        for kind in kinds if isinstance(kinds, list) else [kinds]:
            if kind is not None and not (isinstance(kind, str) and kind in SCHEMA_TYPES):
                raise UnsupportedSchema(f"structured output schema uses unsupported type {kind!r} at {path}")
        if node.get("additionalProperties", False) is not False:
            raise UnsupportedSchema(f"structured output schema at {path}: additionalProperties may only be false")
    # Supported keywords with malformed values (`"required": 5`) would break validation in the child.
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise UnsupportedSchema(f"structured output schema is not valid JSON Schema: {exc.message}") from None


def _nodes(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        raise UnsupportedSchema(f"structured output schema at {path} is not an object")
    yield path, node
    properties = node.get("properties", {})
    if not isinstance(properties, dict):
        raise UnsupportedSchema(f"structured output schema at {path}/properties is not an object")
    for name, child in properties.items():
        yield from _nodes(child, f"{path}/properties/{name}")
    if "items" in node:
        yield from _nodes(node["items"], f"{path}/items")


class StructuredParams(RootModel[dict[str, Any]]):
    """Any object: the requested schema is checked by the tool itself."""


class StructuredCapture:
    """The child's structured answer: staged by the tool, committed by the logged result."""

    def __init__(self) -> None:
        self._staged: dict[str, Any] = {}
        self.committed = False
        self.value: Any = None

    def stage(self, call_id: str, value: Any) -> None:
        self._staged[call_id] = value

    def observe(self, event: SessionEvent) -> None:
        data: Any = event.data
        if event.type == "tool/result" and data.call_id in self._staged and not self.committed:
            value = self._staged.pop(data.call_id)
            if not data.is_error:
                self.committed, self.value = True, value

    def refuse_after_commit(self, tool: str) -> str | None:
        return texts.structured_already_recorded(tool) if self.committed else None

    async def gate(self, call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
        """The run's tool gate: once the value is recorded, every later call is refused."""
        reason = self.refuse_after_commit(call.block.name)
        return ToolResult.failure(reason, "refused") if reason is not None else None


class StructuredOutputTool(Tool[StructuredParams]):
    name = texts.STRUCTURED_TOOL
    description = texts.STRUCTURED_DESCRIPTION
    Params = StructuredParams

    def __init__(self, schema: dict[str, Any], capture: StructuredCapture) -> None:
        from jsonschema import Draft202012Validator  # only structured runs pay for it

        self._schema = schema
        self._validator = Draft202012Validator(schema)
        self._capture = capture

    def schema(self) -> ToolSchema:
        return ToolSchema(name=self.name, description=self.description, parameters=self._schema)

    async def run(self, params: StructuredParams, call: ToolCallContext) -> ToolResult:
        problems = sorted(
            f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
            for error in self._validator.iter_errors(params.root)
        )
        if problems:
            return ToolResult.failure(
                f"the value does not match the schema: {'; '.join(problems)}", "invalid_arguments"
            )
        self._capture.stage(call.call_id, params.root)
        return ToolResult(content=[TextContent(text=texts.STRUCTURED_RECORDED)], ends_turn=True)


def attach_structured_runtime(child: Agent, schema: dict[str, Any]) -> StructuredCapture:
    """Install the structured-output contract in `child`'s scope (call in its setup window)."""
    capture = StructuredCapture()
    ctx, scope = child.ctx, child.scope
    ctx.get(TOOLS).register(StructuredOutputTool(schema, capture), owner=scope)
    ctx.get(PROMPT).add(
        Section(order=texts.STRUCTURED_SECTION_ORDER, name="structured-output", text=texts.STRUCTURED_INSTRUCTION),
        owner=scope,
    )
    ctx.get(TOOLS).gate(scope, capture.gate)
    scope.add(child.session.subscribe(capture.observe, chunks=False))
    return capture
