from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from acp_agent.kernel import Row, compose
from acp_agent.llm.assembler import BlockAssembler
from acp_agent.llm.errors import LlmError
from acp_agent.llm.replay import ChunksEntry, HangEntry, ReplayEntry, ThrowEntry
from acp_agent.llm.scripted import compile_script, pieces
from acp_agent.llm.service import LLM
from acp_agent.session.content import (
    FinishReason,
    ReasoningBlock,
    StreamChunk,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    Usage,
)

from .builders import collect, request


def only(data: Any) -> ReplayEntry:
    """The single entry a one-call script of route s1 compiles to."""
    (entry,) = compile_script([data])["s1"]
    return entry


def chunks_of(data: Any) -> list[StreamChunk]:
    entry = only(data)
    assert isinstance(entry, ChunksEntry)
    return entry.chunks


def assemble(chunks: list[StreamChunk]) -> BlockAssembler:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler


def test_a_list_is_the_script_of_s1_and_an_object_is_keyed_by_route() -> None:
    assert list(compile_script([{"text": "a"}, {"text": "b"}])) == ["s1"]
    assert len(compile_script([{"text": "a"}, {"text": "b"}])["s1"]) == 2

    routes = compile_script({"s1": [{"text": "a"}], "s1/call_1": [{"text": "b"}, {"hang": True}], "s2": []})

    assert {route: len(calls) for route, calls in routes.items()} == {"s1": 1, "s1/call_1": 2, "s2": 0}


def test_reasoning_text_and_tool_calls_become_blocks_in_that_order() -> None:
    chunks = chunks_of(
        {
            "text": "I will list the files.",
            "reasoning": "The user wants a listing.",
            "toolCalls": [
                {"id": "call_1", "name": "bash", "arguments": {"command": "ls -la", "description": "List"}},
                {"id": "call_2", "name": "noop"},
            ],
        }
    )

    assembled = assemble(chunks)
    arguments = json.dumps({"command": "ls -la", "description": "List"})
    assert assembled.blocks() == [
        ReasoningBlock(text="The user wants a listing."),
        TextBlock(text="I will list the files."),
        ToolCallBlock(id="call_1", name="bash", arguments=arguments),
        ToolCallBlock(id="call_2", name="noop", arguments="{}"),
    ]
    assert assembled.finish == FinishReason(kind="tool-calls")
    assert assembled.usage == Usage(input_tokens=100, output_tokens=20)
    # Streamed like a model: a word a delta; every block is opened, filled and closed in turn.
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["I ", "will ", "list ", "the ", "files."]
    assert [
        (c.type, getattr(c, "index", None)) for c in chunks if c.type in ("block-start", "block-end", "usage", "finish")
    ] == [
        ("block-start", 0),
        ("block-end", 0),
        ("block-start", 1),
        ("block-end", 1),
        ("block-start", 2),
        ("block-end", 2),
        ("block-start", 3),
        ("block-end", 3),
        ("usage", None),
        ("finish", None),
    ]
    # The deltas alone spell the same blocks as the block-ends.
    deltas_only = assemble([c for c in chunks if c.type != "block-end"])
    assert deltas_only.blocks() == assembled.blocks()


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        ({"text": "done"}, FinishReason(kind="stop")),
        ({}, FinishReason(kind="stop")),
        ({"toolCalls": [{"id": "c", "name": "bash"}]}, FinishReason(kind="tool-calls")),
        ({"text": "cut", "finish": "max-tokens"}, FinishReason(kind="max-tokens")),
        ({"toolCalls": [{"id": "c", "name": "bash"}], "finish": "stop"}, FinishReason(kind="stop")),
        (
            {"text": "oops", "finish": "error", "message": "content filtered", "code": "FILTER"},
            FinishReason(kind="error", message="content filtered", code="FILTER"),
        ),
    ],
)
def test_finish_kinds(call: dict[str, Any], reason: FinishReason) -> None:
    chunks = chunks_of(call)

    assert chunks[-1].type == "finish" and chunks[-1].reason == reason
    assert chunks[-2].type == "usage"


def test_usage_can_be_written() -> None:
    chunks = chunks_of({"text": "hi", "usage": {"inputTokens": 7, "outputTokens": 1, "cacheReadTokens": 3}})

    assert assemble(chunks).usage == Usage(input_tokens=7, output_tokens=1, cache_read_tokens=3)


def test_empty_text_is_one_empty_delta() -> None:
    assert pieces("") == [""]
    assert pieces("  two  words ") == ["  ", "two  ", "words "]
    assert assemble(chunks_of({"text": ""})).blocks() == [TextBlock(text="")]


def test_throw_with_and_without_text() -> None:
    bare = only({"throw": {"message": "unauthorized", "code": "AUTH", "status": 401}})
    assert bare == ThrowEntry(chunks=[], message="unauthorized", code="AUTH", status=401)

    talking = only({"throw": {"message": "connection reset", "code": "STREAM_CLOSED", "text": "Half an answer"}})
    assert isinstance(talking, ThrowEntry)
    assert (talking.message, talking.code, talking.status) == ("connection reset", "STREAM_CLOSED", None)
    assert assemble(talking.chunks).blocks() == [TextBlock(text="Half an answer")]
    assert {c.type for c in talking.chunks} == {"block-start", "text-delta", "block-end"}


def test_hang() -> None:
    assert only({"hang": True}) == HangEntry()


@pytest.mark.parametrize(
    "data",
    [
        {"s1": [{"hang": False}]},
        [{"txt": "typo"}],
        [{"text": "a", "finish": "aborted"}],
        [{"throw": {"message": "no code"}}],
        "not a script",
    ],
)
def test_an_invalid_script_is_refused(data: Any) -> None:
    with pytest.raises(ValidationError):
        compile_script(data)


@pytest.mark.anyio
async def test_the_plugin_serves_ctx_llm_from_the_script_file(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "s1": [
                    {"text": "Hello there"},
                    {"throw": {"message": "too many requests", "code": "RATE_LIMIT", "status": 429}},
                ],
                "s1/call_1": [{"reasoning": "child thinks", "text": "CHILD"}],
            }
        )
    )
    rows = [
        Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path / "sessions")}),
        Row(id="llm", name="acp_agent.llm.service"),
        Row(id="scripted", name="acp_agent.llm.scripted", config={"script": str(script)}),
    ]

    ctx = compose(rows)
    async with ctx.running():
        first = assemble(await collect(await ctx.get(LLM).stream(request())))
        child = assemble(await collect(await ctx.get(LLM).stream(request("s1/call_1"))))
        with pytest.raises(LlmError) as caught:
            await collect(await ctx.get(LLM).stream(request()))

    assert first.blocks() == [TextBlock(text="Hello there")]
    assert first.finish == FinishReason(kind="stop")
    assert child.blocks() == [ReasoningBlock(text="child thinks"), TextBlock(text="CHILD")]
    assert (caught.value.code, caught.value.status) == ("RATE_LIMIT", 429)
    ctx.scope.dispose()


@pytest.mark.anyio
async def test_model_placeholders_are_filled_with_the_requests_model_as_they_stream() -> None:
    from acp_agent.llm.scripted import ScriptedModel

    script = compile_script(
        [{"reasoning": "As {{model}}:", "text": "I am {{model}}.", "toolCalls": [{"id": "c", "name": "t"}]}]
    )
    model = ScriptedModel(script)
    chunks = await collect(await model.listener(request().model_copy(update={"model": "large"}), next=None))  # type: ignore[arg-type]
    deltas = [chunk.text for chunk in chunks if isinstance(chunk, TextDelta)]
    assert deltas == ["I ", "am ", "large."]
    assembled = assemble(chunks)
    assert assembled.blocks() == [
        ReasoningBlock(text="As large:"),
        TextBlock(text="I am large."),
        ToolCallBlock(id="c", name="t", arguments="{}"),
    ]
