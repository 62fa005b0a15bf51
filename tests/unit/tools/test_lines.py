"""`read_window`: a window of lines from a byte stream, against a plain split of the whole text,
with short reads that cut the stream anywhere; the limits; and a 1 GB sparse file read at its
start within a few MB."""

from __future__ import annotations

import io
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.tools import ReadFileParams, ReadFileTool
from acp_agent.tools.errors import BinaryFile
from acp_agent.tools.lines import Lines, Window, read_window
from acp_agent.tools.texts import LINE_CUT, READ_BYTES
from tests.sparse import sparse_file

from .helpers import logged_call


def stream(data: bytes, piece: int | None = None) -> Callable[[int], bytes]:
    """A `read` over `data`, returning at most `piece` bytes a call (short reads)."""
    source = io.BytesIO(data)
    return lambda n: source.read(n if piece is None else min(n, piece))


def expected(text: str, window: Window) -> Lines:
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    cut = [line[: window.max_line_chars] + LINE_CUT if len(line) > window.max_line_chars else line for line in lines]
    got = cut[window.start - 1 : window.start - 1 + window.count]
    more = window.start - 1 + window.count < len(lines)
    return Lines(got, more=more, total=None if more else len(lines))


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab\né€\r", max_size=60),
    start=st.integers(1, 12),
    count=st.integers(1, 5),
    max_chars=st.integers(1, 4),
    piece=st.integers(1, 9),
)
def test_a_window_is_what_splitting_the_whole_text_gives(
    text: str, start: int, count: int, max_chars: int, piece: int
) -> None:
    window = Window(start, count, max_chars)
    assert read_window(stream(text.encode(), piece), window) == expected(text, window)


def test_a_cut_line_keeps_whole_characters_and_skips_the_rest() -> None:
    window = Window(1, 5, 3)
    assert read_window(stream("€€€€€€\nab\n".encode()), window).lines == [f"€€€{LINE_CUT}", "ab"]
    # Cut inside a character's bytes (the line passes 4 bytes a character): still whole characters.
    assert read_window(stream(("a" * 11 + "€€").encode()), window).lines == [f"aaa{LINE_CUT}"]


def test_one_call_stops_before_the_line_that_would_pass_256_kib() -> None:
    line = "x" * 1000
    data = "".join(f"{line}\n" for _ in range(400)).encode()
    found = read_window(stream(data), Window(1, 2000, 2000))
    per_line = len(f"{1:>6}\t{line}\n")
    assert len(found.lines) == READ_BYTES // per_line == 260
    assert (found.more, found.full, found.total) == (True, True, None)
    last = read_window(stream(b"y\n" + b"z" * 2000), Window(1, 5, 300_000))
    assert last.lines == ["y", "z" * 2000]  # a last line without a newline counts the same
    huge = read_window(stream(b"a\n" + b"b" * (READ_BYTES + 10)), Window(1, 5, 300_000))
    assert (huge.lines, huge.full) == (["a"], True)
    alone = read_window(stream(b"b" * (READ_BYTES + 10)), Window(1, 5, 300_000))
    assert len(alone.lines) == 1  # the first line always comes, or nothing could be read


def test_nul_in_the_first_8_kib_is_binary_and_bad_utf8_counts_only_inside_the_window() -> None:
    with pytest.raises(BinaryFile):
        read_window(stream(b"x" * 8000 + b"\0"), Window(1, 1, 10))
    assert read_window(stream(b"x" * 8192 + b"\0\n"), Window(1, 1, 10)).lines == [f"xxxxxxxxxx{LINE_CUT}"]
    data = b"\xff\xfe\nfine\n"
    assert read_window(stream(data), Window(2, 1, 10)).lines == ["fine"]
    with pytest.raises(UnicodeDecodeError):
        read_window(stream(data), Window(1, 1, 10))


def test_an_offset_past_the_end_knows_how_many_lines_there_are() -> None:
    assert read_window(stream(b"a\nb"), Window(5, 1, 10)) == Lines([], more=False, total=2)
    assert read_window(stream(b"a\nb\n"), Window(3, 1, 10)) == Lines([], more=False, total=2)
    assert read_window(stream(b""), Window(1, 1, 10)) == Lines([], more=False, total=0)


@pytest.mark.anyio
async def test_a_window_at_the_start_of_a_1_gb_file_reads_only_what_it_needs(tmp_path: Path) -> None:
    sparse_file(tmp_path / "big.txt")
    tracemalloc.start()
    try:
        result = await ReadFileTool().run(ReadFileParams(path="big.txt", limit=3), logged_call(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.plain_text() == (
        "     1\tline 1 of the start\n     2\tline 2 of the start\n     3\tline 3 of the start\n"
        "[lines 1-3; more follow: continue with offset 4]"
    )
    assert peak < 4 * 1024 * 1024
