"""Structured output, exactly as the contract words it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from acp_agent.agent import Agent, Section
from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.keys import PROMPT
from acp_agent.session.content import TextContent
from acp_agent.session.events import ToolResultData
from acp_agent.session.index import INDEX_DIR
from acp_agent.session.registry import default_registry
from acp_agent.subagents import UnsupportedSchema, texts
from acp_agent.subagents.structured import StructuredCapture, check_schema
from tests.unit.subagents.conftest import Harness, bash, delegate, kinds, of_type, results, text

pytestmark = pytest.mark.anyio

# Copied from seeds/004 (the contract), character for character.
SEED_DESCRIPTION = (
    "Report your final structured result. Call this exactly once, when your answer is complete; "
    "the arguments must match this tool's parameter schema exactly."
)
SEED_INSTRUCTION = (
    "When you have your final answer, you MUST report it by calling the `structured_output` tool with "
    "arguments matching its parameter schema exactly. Do not finish with a plain text answer: only the "
    "tool call counts as your result."
)
SEED_RECORDED = "Structured output recorded."
SEED_ALREADY_RECORDED_BASH = (
    "Error: structured output already recorded: the run is complete, so `bash` is not executed."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Answer",
    "description": "what the child found",
    "properties": {
        "answer": {"type": "string", "description": "the answer"},
        "confidence": {"type": ["number", "null"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "ok": {"type": "boolean"},
        "count": {"type": "integer"},
        "nested": {"type": "object", "properties": {"x": {"type": "null"}}, "additionalProperties": False},
    },
    "required": ["answer"],
    "additionalProperties": False,
}


def structured(call_id: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "name": "structured_output", "arguments": value}


def test_the_texts_are_the_contracts() -> None:
    assert texts.STRUCTURED_TOOL == "structured_output"
    assert texts.STRUCTURED_DESCRIPTION == SEED_DESCRIPTION
    assert texts.STRUCTURED_INSTRUCTION == SEED_INSTRUCTION
    assert texts.STRUCTURED_SECTION_ORDER == 190
    assert texts.STRUCTURED_RECORDED == SEED_RECORDED
    assert "Error: " + texts.structured_already_recorded("bash") == SEED_ALREADY_RECORDED_BASH


async def test_a_structured_run_validates_records_and_ends_the_turn(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "find it", outputSchema=SCHEMA)]}, {"text": "ok"}],
            "s1/a": [
                {"text": "trying", "toolCalls": [structured("v1", {"answer": 42, "extra": True})]},
                {"toolCalls": [structured("v2", {"answer": "42", "tags": ["a"]}), bash("late", "touch ran")]},
                {"text": "this call must never be asked for"},
            ],
        }
    )
    sections: list[list[Section]] = []

    def record_sections(agent: Agent) -> None:
        sections.append(h.ctx.get(PROMPT).sections(agent.scope))

    h.ctx.events.on(PUBLISHED, record_sections)
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
        assert [s.name for s in h.ctx.get(PROMPT).sections(None)] == ["persona"]
    child = h.agent("s1/a")
    # Wrong value: the model reads why, and may try again.
    first, ack, refused = results(child)
    assert first == (
        "Error: the value does not match the schema: "
        "<root>: Additional properties are not allowed ('extra' was unexpected); answer: 42 is not of type 'string'"
    )
    assert first.startswith("Error: the value does not match the schema: ")
    assert of_type(child, "tool/result")[0].error.code == "invalid_arguments"
    assert ack == texts.STRUCTURED_RECORDED == SEED_RECORDED
    assert refused == SEED_ALREADY_RECORDED_BASH == "Error: " + texts.structured_already_recorded("bash")
    assert not (h.workspace / "ran").exists()
    # The recorded call ends the turn: the child's third scripted call is never made.
    assert len(h.of("s1/a")) == 2
    assert kinds(child)[-2:] == ["step/end", "turn/end"]
    assert of_type(child, "turn/end")[0].reason.kind == "completed"
    # The parent reads the captured value alone, as JSON.
    [result] = of_type(parent, "tool/result")
    assert not result.is_error and json.loads(result.content[0].text) == {"answer": "42", "tags": ["a"]}
    # What the child model saw: the tool, with the requested schema, and the order-190 instruction.
    for request in h.of("s1/a"):
        [schema] = [t for t in request.tools if t.name == "structured_output"]
        assert (schema.description, schema.parameters) == (SEED_DESCRIPTION, SCHEMA)
        assert SEED_INSTRUCTION in request.system
        assert request.system.index("You are acp-agent") < request.system.index(SEED_INSTRUCTION)
    [_, child_sections] = sections
    [instruction] = [s for s in child_sections if s.name == "structured-output"]
    assert (instruction.order, instruction.text) == (190, SEED_INSTRUCTION)


async def test_structured_output_is_never_shown_to_the_parent_or_a_sibling(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [
                {"toolCalls": [delegate("a", "structured", outputSchema=SCHEMA), delegate("b", "plain")]},
                {"text": "ok"},
            ],
            "s1/a": [{"toolCalls": [structured("v", {"answer": "x"})]}],
            "s1/b": [{"toolCalls": [bash("c", "true")]}, {"text": "plain answer"}],
        }
    )
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
    assert results(parent) == ['{"answer": "x"}', "plain answer"]
    names = {route: [[t.name for t in r.tools] for r in h.of(route)] for route in ("s1", "s1/a", "s1/b")}
    assert len(names["s1"]) == 2 and len(names["s1/b"]) == 2
    assert all("structured_output" not in tools for tools in names["s1"] + names["s1/b"])
    assert names["s1/a"] == [["bash", "subagent", "subagent_fork", "structured_output"]]
    assert all(SEED_INSTRUCTION not in r.system for r in h.of("s1") + h.of("s1/b"))


async def test_a_filtered_structured_child_may_still_report(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "x", outputSchema=SCHEMA)]}, {"text": "ok"}],
            "s1/a": [{"toolCalls": [structured("v", {"answer": "y"})]}],
        },
        spawn_tool={"tools": []},
    )
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
    assert [[t.name for t in r.tools] for r in h.of("s1/a")] == [["structured_output"]]
    assert results(parent) == ['{"answer": "y"}']


async def test_a_clean_turn_without_the_call_settles_error(harness: Callable[..., Harness]) -> None:
    h = harness(
        {
            "s1": [{"toolCalls": [delegate("a", "x", outputSchema=SCHEMA)]}, {"text": "ok"}],
            "s1/a": [{"text": "a plain answer"}, {"text": "never asked: no re-prompt"}],
        }
    )
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
    assert results(parent) == ["Error: subagent run failed\nPartial output before the run ended:\na plain answer"]
    [result] = of_type(parent, "tool/result")
    assert result.is_error and result.error.code == "subagent_error"
    assert len(h.of("s1/a")) == 1
    assert of_type(h.agent("s1/a"), "turn/end")[0].reason.kind == "completed"  # the child's own log


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}},
            "structured output schema uses unsupported keyword '$ref' at #/properties/x",
        ),
        (
            {"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}]}}},
            "structured output schema uses unsupported keyword 'anyOf' at #/properties/x",
        ),
        ({"type": "object", "oneOf": []}, "structured output schema uses unsupported keyword 'oneOf' at #"),
        (
            {"type": "object", "properties": {"l": {"type": "array", "items": {"allOf": []}}}},
            "structured output schema uses unsupported keyword 'allOf' at #/properties/l/items",
        ),
        (
            {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
            "structured output schema uses unsupported keyword 'patternProperties' at #",
        ),
        (
            {"type": "object", "properties": {"x": {"not": {"type": "null"}}}},
            "structured output schema uses unsupported keyword 'not' at #/properties/x",
        ),
        (
            {"type": "array", "items": {"type": "string"}},
            'a structured output schema must be an object schema (`"type": "object"`)',
        ),
        ({"properties": {}}, 'a structured output schema must be an object schema (`"type": "object"`)'),
        (
            {"type": "object", "additionalProperties": True},
            "structured output schema at #: additionalProperties may only be false",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "structured output schema at #/properties/x: additionalProperties may only be false",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "date"}}},
            "structured output schema uses unsupported type 'date' at #/properties/x",
        ),
        (
            {"type": "object", "properties": {"x": {"type": ["string", "decimal"]}}},
            "structured output schema uses unsupported type 'decimal' at #/properties/x",
        ),
        (
            {"type": "object", "properties": {"x": {"type": {"weird": True}}}},
            "structured output schema uses unsupported type {'weird': True} at #/properties/x",
        ),
        ({"type": "object", "properties": {"x": True}}, "structured output schema at #/properties/x is not an object"),
        ({"type": "object", "properties": ["x"]}, "structured output schema at #/properties is not an object"),
        (
            {"type": "object", "properties": {"l": {"type": "array", "items": [{"type": "string"}]}}},
            "structured output schema at #/properties/l/items is not an object",
        ),
        (
            {"type": "object", "required": 5},
            "structured output schema is not valid JSON Schema: 5 is not of type 'array'",
        ),
    ],
    ids=[
        "ref",
        "anyOf",
        "oneOf",
        "allOf",
        "patternProperties",
        "not",
        "array-root",
        "untyped-root",
        "additionalProperties-true",
        "additionalProperties-schema",
        "unknown-type",
        "unknown-type-in-list",
        "unhashable-type",
        "boolean-subschema",
        "properties-list",
        "tuple-items",
        "malformed-required",
    ],
)
async def test_an_unsupported_schema_fails_before_the_child_is_created(
    schema: dict[str, Any], message: str, harness: Callable[..., Harness]
) -> None:
    with pytest.raises(UnsupportedSchema) as raised:
        check_schema(schema)
    assert str(raised.value) == message
    h = harness(
        {"s1": [{"toolCalls": [delegate("a", "x", outputSchema=schema)]}, {"text": "ok"}], "s1/a": [{"text": "no"}]}
    )
    async with h.ctx.running():
        parent = await h.parent()
        await parent.followup(text("go")).wait()
    assert results(parent) == [f"Error: {message}"]
    assert of_type(parent, "tool/result")[0].error.code == "subagent_not_started"
    assert h.published == [parent] and h.of("s1/a") == []
    assert sorted(p.name for p in h.sessions.iterdir() if p.is_dir() and p.name != INDEX_DIR) == [
        parent.id
    ]  # no child was stored


def test_a_non_object_schema_is_refused() -> None:
    with pytest.raises(UnsupportedSchema, match="must be an object schema"):
        check_schema(["type", "object"])


def test_the_supported_subset_passes() -> None:
    check_schema(SCHEMA)


def test_only_a_successful_result_commits_a_staged_value() -> None:
    """The capture commits on the logged result, and only when that result succeeded."""
    registry = default_registry()

    def result(call_id: str, is_error: bool) -> Any:
        data = ToolResultData(turn=1, step=1, call_id=call_id, content=[TextContent(text="r")], is_error=is_error)
        return registry.build("tool/result", 0, 0, data)

    capture = StructuredCapture()
    capture.stage("a", {"v": 1})
    capture.observe(result("other", False))  # not a staged call
    capture.observe(result("a", True))  # its result failed after all
    assert (capture.committed, capture.refuse_after_commit("bash")) == (False, None)
    capture.stage("b", {"v": 2})
    capture.observe(result("b", False))
    assert (capture.committed, capture.value) == (True, {"v": 2})
    capture.stage("c", {"v": 3})
    capture.observe(result("c", False))  # the first commit stands
    assert capture.value == {"v": 2}
    assert capture.refuse_after_commit("bash") == texts.structured_already_recorded("bash")
