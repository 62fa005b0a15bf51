"""The pure frame checks: splitting a byte stream, strict parsing, what a frame may not hold."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from acp_agent.acp.frames import (
    MAX_NESTING,
    OVERSIZED,
    ParseError,
    content_problem,
    envelope_problem,
    parse,
    split_frames,
)
from tests.memory import left_behind

pytestmark = pytest.mark.anyio


async def split(chunks: list[bytes], limit: int) -> list[bytes | None]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [frame async for frame in split_frames(source(), limit)]


async def test_frames_are_cut_at_newlines_across_chunks() -> None:
    assert await split([b"ab", b"c\nde", b"\n\nf"], 10) == [b"abc", b"de", b"", b"f"]


async def test_a_frame_over_the_limit_is_reported_once_and_its_bytes_dropped() -> None:
    # At the limit is fine; one more byte is not, whether it arrives in one chunk or many.
    assert await split([b"12345\n", b"123456\nok\n"], 5) == [b"12345", OVERSIZED, b"ok"]
    assert await split([b"123", b"456", b"789", b"0\nok\n"], 5) == [OVERSIZED, b"ok"]
    assert await split([b"123", b"456", b"789"], 5) == [OVERSIZED]  # unterminated at EOF


def test_parse_is_strict_json() -> None:
    assert parse('{"a": [1, "x"]}') == {"a": [1, "x"]}
    for text, why in [
        ("NaN", "NaN is not JSON"),
        ("[Infinity]", "Infinity is not JSON"),
        ("[" * 5000, "nested deeper"),
    ]:
        with pytest.raises(ParseError, match=why):
            parse(text)


def test_parsing_frames_leaves_nothing_allocated_behind() -> None:
    # A decoder made per frame left the names its scanner looked its options up by in the
    # interpreter's attribute cache: about 5 KB over these 200 frames.
    frame = '{"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}'
    parse(frame)
    with left_behind() as left:
        for _ in range(200):
            parse(frame)
    assert left.bytes < 1024


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def test_content_problem_finds_nesting_past_the_limit() -> None:
    assert content_problem(nested(MAX_NESTING), "params", "") is None
    problem = content_problem({"deep": nested(MAX_NESTING)}, "params", "")
    assert problem == f"params: nested deeper than {MAX_NESTING} levels"


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({"prompt": [{"type": "text", "text": "a\ud800b"}]}, "params.prompt[0].text: holds a lone surrogate (U+D800)"),
        ({"x": ["ok", "\udfff"]}, "params.x[1]: holds a lone surrogate (U+DFFF)"),
        ({"a": {"b\udc00": 1}}, "params.a: a key holds a lone surrogate (U+DC00)"),
    ],
)
def test_content_problem_finds_a_lone_surrogate(value: Any, found: str) -> None:
    assert content_problem(value, "params", "\\udfff") == f"{found}, which is not Unicode text"


def test_a_frame_without_a_surrogate_escape_is_not_searched_and_a_pair_is_text() -> None:
    assert content_problem({"x": "\ud800"}, "params", "no escape here") is None
    assert content_problem({"x": "\U0001f600"}, "params", "\\ud83d\\ude00") is None


def test_envelope_problem_accepts_requests_and_notifications() -> None:
    assert envelope_problem({"jsonrpc": "2.0", "id": "x", "method": "m", "params": [1]}) is None
    assert envelope_problem({"jsonrpc": "2.0", "id": None, "method": "m", "params": {}}) is None
    assert envelope_problem({"jsonrpc": "2.0", "method": "n"}) is None
