from __future__ import annotations

from acp_agent.llm.assembler import BlockAssembler, loggable
from acp_agent.session.content import (
    BlockEnd,
    BlockStart,
    Finish,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    UsageChunk,
)


def assemble(*chunks: StreamChunk) -> BlockAssembler:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler


def test_text_reasoning_and_tool_call_blocks_are_built_from_deltas() -> None:
    assembler = assemble(
        BlockStart(index=0, block_type="reasoning"),
        ReasoningDelta(index=0, text="Let me "),
        ReasoningDelta(index=0, text="think."),
        BlockStart(index=1, block_type="text"),
        TextDelta(index=1, text="Hello "),
        TextDelta(index=1, text="world"),
        BlockStart(index=2, block_type="tool-call"),
        ToolCallDelta(index=2, id="call_1", name="bash", arguments_delta=""),
        ToolCallDelta(index=2, id="call_1", arguments_delta='{"command": '),
        ToolCallDelta(index=2, id="", name=None, arguments_delta='"ls"}'),
    )

    assert assembler.blocks() == [
        ReasoningBlock(text="Let me think."),
        TextBlock(text="Hello world"),
        ToolCallBlock(id="call_1", name="bash", arguments='{"command": "ls"}'),
    ]
    assert assembler.usage is None
    assert assembler.finish is None


def test_block_end_is_authoritative_over_the_deltas() -> None:
    assembler = assemble(
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="draft"),
        BlockEnd(index=0, block=TextBlock(text="final")),
        BlockStart(index=1, block_type="tool-call"),
        ToolCallDelta(index=1, id="c", name="bash", arguments_delta="{"),
        BlockEnd(index=1, block=ToolCallBlock(id="c", name="bash", arguments="{}")),
    )

    assert assembler.blocks() == [TextBlock(text="final"), ToolCallBlock(id="c", name="bash", arguments="{}")]


def test_usage_and_finish_are_kept() -> None:
    usage = Usage(input_tokens=5, output_tokens=1, cache_read_tokens=2, reasoning_tokens=0)
    assembler = assemble(
        BlockStart(index=0, block_type="text"),
        TextDelta(index=0, text="ok"),
        UsageChunk(usage=usage),
        Finish(reason=FinishReason(kind="error", message="boom", code="SERVER")),
    )

    assert assembler.usage == usage
    assert assembler.finish == FinishReason(kind="error", message="boom", code="SERVER")
    assert assembler.blocks() == [TextBlock(text="ok")]


def test_deltas_without_block_start_open_the_block_implicitly() -> None:
    assembler = assemble(
        ReasoningDelta(index=0, text="hmm"),
        TextDelta(index=1, text="a"),
        TextDelta(index=1, text="b"),
        ToolCallDelta(index=2, id="call_9", name="read", arguments_delta="{}"),
    )

    assert assembler.streamed
    assert assembler.blocks() == [
        ReasoningBlock(text="hmm"),
        TextBlock(text="ab"),
        ToolCallBlock(id="call_9", name="read", arguments="{}"),
    ]


def test_a_delta_after_block_end_reopens_the_index_from_its_deltas() -> None:
    # Not a well-formed stream; the assembler keeps what it was last told rather than fail.
    assembler = assemble(BlockEnd(index=0, block=TextBlock(text="done")), TextDelta(index=0, text="more"))

    assert assembler.blocks() == [TextBlock(text="more")]


def test_streamed_says_whether_anything_was_said() -> None:
    assembler = BlockAssembler()
    assert not assembler.streamed
    assert assembler.blocks() == []

    assembler.feed(UsageChunk(usage=Usage(input_tokens=1, output_tokens=0)))
    assembler.feed(Finish(reason=FinishReason(kind="stop")))
    assert not assembler.streamed

    # A block opened but still empty is nothing to keep.
    assembler.feed(BlockStart(index=0, block_type="text"))
    assembler.feed(BlockStart(index=1, block_type="tool-call"))
    assert not assembler.streamed
    assert assembler.blocks() == []

    assembler.feed(TextDelta(index=0, text="a"))
    assert assembler.streamed
    assert assembler.blocks() == [TextBlock(text="a")]


def test_a_tool_call_is_kept_from_its_first_delta_even_without_argument_text() -> None:
    assembler = assemble(
        BlockStart(index=0, block_type="tool-call"),
        ToolCallDelta(index=0, id="call_1", name="bash", arguments_delta=""),
    )

    assert assembler.streamed
    assert assembler.blocks() == [ToolCallBlock(id="call_1", name="bash", arguments="")]


def test_blocks_come_in_index_order_whatever_the_arrival_order() -> None:
    assembler = assemble(
        BlockStart(index=2, block_type="text"),
        TextDelta(index=2, text="third"),
        BlockStart(index=0, block_type="reasoning"),
        ReasoningDelta(index=0, text="first"),
        BlockEnd(index=1, block=TextBlock(text="second")),
        BlockEnd(index=0, block=ReasoningBlock(text="first")),
    )

    assert assembler.blocks() == [
        ReasoningBlock(text="first"),
        TextBlock(text="second"),
        TextBlock(text="third"),
    ]


def call(index: int, call_id: str) -> BlockEnd:
    return BlockEnd(index=index, block=ToolCallBlock(id=call_id, name="bash", arguments="{}"))


def test_a_call_repeating_an_earlier_calls_id_is_renumbered_and_named_in_repeated() -> None:
    assembler = assemble(
        call(0, "a"), TextDelta(index=1, text="and "), call(2, "a"), call(3, "a~2"), call(4, "a"), call(5, "b")
    )
    ids = [block.id for block in assembler.blocks() if isinstance(block, ToolCallBlock)]
    assert ids == ["a", "a~3", "a~2", "a~4", "b"]  # an id the model gave itself is never taken
    assert assembler.repeated == {"a~3": "a", "a~4": "a"}
    assert assemble(call(0, "a"), call(1, "b")).repeated == {}


def test_loggable_makes_a_calls_id_name_and_arguments_unicode_text() -> None:
    delta = ToolCallDelta(index=0, id="c\ud800", name="r\udc00", arguments_delta='{"a": "\ud800"}')
    assert loggable(delta) == ToolCallDelta(index=0, id="c\ufffd", name="r\ufffd", arguments_delta='{"a": "\ufffd"}')
    end = BlockEnd(index=0, block=ToolCallBlock(id="c\ud800", name="bash", arguments="{}"))
    assert loggable(end) == BlockEnd(index=0, block=ToolCallBlock(id="c\ufffd", name="bash", arguments="{}"))
    whole = [ToolCallDelta(index=0, id="c", arguments_delta=""), call(0, "c"), TextDelta(index=1, text="\ud800")]
    assert all(loggable(chunk) is chunk for chunk in whole)  # only a call's fields are its to fix
