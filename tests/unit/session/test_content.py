from __future__ import annotations

import pytest
from pydantic import ValidationError

from acp_agent.session import (
    ASSISTANT_BLOCK_ADAPTER,
    CONTENT_BLOCK_ADAPTER,
    BlockEnd,
    BlockStart,
    Finish,
    ReasoningDelta,
    ResourceLink,
    TextContent,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    UsageChunk,
    parse_chunk,
)
from acp_agent.session.content import BlobResourceContents, EmbeddedResource, ImageContent, block_problem, is_blank

CHUNKS = [
    ({"type": "block-start", "index": 0, "blockType": "reasoning"}, BlockStart),
    ({"type": "text-delta", "index": 1, "text": "OK"}, TextDelta),
    ({"type": "reasoning-delta", "index": 0, "text": "The"}, ReasoningDelta),
    ({"type": "tool-call-delta", "index": 1, "id": "call_0", "name": "bash", "argumentsDelta": "{"}, ToolCallDelta),
    ({"type": "tool-call-delta", "index": 1, "id": "call_0", "argumentsDelta": "}"}, ToolCallDelta),
    (
        {"type": "block-end", "index": 1, "block": {"type": "tool-call", "id": "c", "name": "bash", "arguments": "{}"}},
        BlockEnd,
    ),
    ({"type": "usage", "usage": {"inputTokens": 5, "outputTokens": 2}}, UsageChunk),
    (
        {"type": "usage", "usage": {"inputTokens": 5, "outputTokens": 2, "cacheReadTokens": 1, "reasoningTokens": 1}},
        UsageChunk,
    ),
    ({"type": "finish", "reason": {"kind": "stop"}}, Finish),
    ({"type": "finish", "reason": {"kind": "error", "message": "boom", "code": "AUTH"}}, Finish),
]


@pytest.mark.parametrize(("obj", "cls"), CHUNKS)
def test_chunks_parse_to_their_model_and_dump_back(obj: dict[str, object], cls: type) -> None:
    chunk = parse_chunk(obj)
    assert type(chunk) is cls
    assert chunk.dump() == obj


def test_chunks_accept_snake_case_and_dump_camel_case() -> None:
    chunk = parse_chunk({"type": "block-start", "index": 0, "block_type": "text"})
    assert chunk.dump() == {"type": "block-start", "index": 0, "blockType": "text"}


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "nope", "index": 0},
        {"type": "block-start", "index": 0, "blockType": "image"},
        {"type": "finish", "reason": {"kind": "exploded"}},
        {"type": "text-delta", "index": 0, "text": "x", "extra": 1},
    ],
)
def test_malformed_chunks_are_refused(obj: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        parse_chunk(obj)


def test_content_blocks_keep_unknown_fields() -> None:
    link = {"type": "resource_link", "uri": "file:///a.py", "name": "a.py", "mimeType": "text/x-python", "size": 3}
    text = {"type": "text", "text": "hi", "annotations": {"priority": 1}}
    assert isinstance(CONTENT_BLOCK_ADAPTER.validate_python(link), ResourceLink)
    assert CONTENT_BLOCK_ADAPTER.validate_python(link).dump() == link
    assert isinstance(CONTENT_BLOCK_ADAPTER.validate_python(text), TextContent)
    assert CONTENT_BLOCK_ADAPTER.validate_python(text).dump() == text


def test_assistant_blocks_are_a_union_on_type() -> None:
    block = ASSISTANT_BLOCK_ADAPTER.validate_python({"type": "tool-call", "id": "c", "name": "n", "arguments": ""})
    assert block == ToolCallBlock(id="c", name="n", arguments="")
    with pytest.raises(ValidationError):
        ASSISTANT_BLOCK_ADAPTER.validate_python({"type": "resource_link", "uri": "u", "name": "n"})


def test_a_block_unfit_to_resend_is_named_and_a_blank_prompt_is_blank() -> None:
    png = "iVBORw0KGgo="
    assert block_problem(ImageContent(data=png, mime_type="image/PNG")) is None
    assert block_problem(ImageContent(data=png, mime_type="image/svg+xml")) == (
        "mimeType 'image/svg+xml' is not an image type this agent sends (image/png, image/jpeg, image/gif, image/webp)"
    )
    assert block_problem(ImageContent(data=png + "\n", mime_type="image/png")) == "data is not base64 (or is empty)"
    blob = EmbeddedResource(resource=BlobResourceContents(uri="file:///a", blob="A"))
    assert block_problem(blob) == "resource.blob is not base64"
    assert block_problem(EmbeddedResource(resource=BlobResourceContents(uri="file:///a", blob=png))) is None
    assert block_problem(TextContent(text="")) is None
    assert is_blank([]) and is_blank([TextContent(text=" \t\n")])
    assert not is_blank([TextContent(text=" "), ResourceLink(uri="file:///a", name="a")])
