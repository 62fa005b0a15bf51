"""A window of a text file's lines, read from a byte stream without holding more than the window.

`read_window(read, ...)` pulls chunks from `read` (a file's `read`, or an in-memory stream of an
editor's answer), passes over the lines before the window counting newlines only, keeps at most
4 bytes a character of each line in the window (the rest of a long line is skipped, not kept),
and stops once the window is full or its text would pass `READ_BYTES`. Lines are split at `\\n`
only (as editors number them); a final newline ends the last line rather than starting one.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from acp_agent.tools.errors import BinaryFile
from acp_agent.tools.texts import BINARY_PROBE, LINE_CUT, READ_BYTES

CHUNK = 256 * 1024


@dataclass(frozen=True)
class Window:
    """Which lines a read asks for."""

    start: int
    """The 1-based first line."""
    count: int
    """The most lines."""
    max_line_chars: int
    """Longer lines are cut, ending with `LINE_CUT`."""


class Lines(NamedTuple):
    """What a read found."""

    lines: list[str]
    """The window's lines, long ones cut."""
    more: bool
    """Lines remain after the window."""
    full: bool = False
    """The read stopped because the next line would have passed `READ_BYTES`."""
    total: int | None = None
    """How many lines the file has, when the read reached its end (and knows)."""


def read_window(read: Callable[[int], bytes], window: Window, *, skip: int | None = None) -> Lines:
    """The lines of `window` from the stream `read`, which starts at line 1 of the file, or at the
    window's first line when `skip` is 0 (an editor's answer). BinaryFile when the stream's first
    `BINARY_PROBE` bytes hold a NUL; UnicodeDecodeError when a line of the window is not UTF-8."""
    to_skip = window.start - 1 if skip is None else skip
    cap = window.max_line_chars * 4  # bytes enough for max_line_chars characters of UTF-8
    lines: list[str] = []
    size = 0
    seen = 0  # lines passed over
    line = bytearray()
    over = False  # the line has more bytes than `cap`
    open_line = False  # bytes seen since the last newline
    buf = read(BINARY_PROBE)
    if b"\0" in buf:
        raise BinaryFile()
    pos = 0
    while True:
        if pos >= len(buf):
            buf, pos = read(CHUNK), 0
            if not buf:
                break
        if seen < to_skip:
            newlines = buf.count(b"\n", pos)
            if seen + newlines < to_skip:
                seen += newlines
                open_line = not buf.endswith(b"\n")
                pos = len(buf)
                continue
            while seen < to_skip:
                pos = buf.index(b"\n", pos) + 1
                seen += 1
            open_line = False
            continue
        if len(lines) == window.count:
            return Lines(lines, more=True)
        newline = buf.find(b"\n", pos)
        end = len(buf) if newline < 0 else newline
        room = cap - len(line)
        line += buf[pos : min(end, pos + room)]
        over = over or end - pos > room
        open_line = True
        if newline < 0:
            pos = len(buf)
            continue
        pos = newline + 1
        text = _text(bytes(line), over, window.max_line_chars)
        cost = _cost(window.start + len(lines), text)
        if lines and size + cost > READ_BYTES:
            return Lines(lines, more=True, full=True)
        lines.append(text)
        size += cost
        line.clear()
        over = open_line = False
    if open_line and seen >= to_skip:  # a last line without a newline
        text = _text(bytes(line), over, window.max_line_chars)
        if lines and size + _cost(window.start + len(lines), text) > READ_BYTES:
            return Lines(lines, more=True, full=True)
        lines.append(text)
    elif open_line:
        seen += 1
    return Lines(lines, more=False, total=seen + len(lines))


def _text(data: bytes, over: bool, max_chars: int) -> str:
    if over:  # cut inside the line: a character split at the cut is dropped, not an error
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    else:
        text = data.decode("utf-8")
    return text[:max_chars] + LINE_CUT if over or len(text) > max_chars else text


def _cost(number: int, text: str) -> int:
    """The UTF-8 bytes of the line as read_file numbers it, with its newline."""
    return len(f"{number:>6}\t".encode()) + len(text.encode("utf-8")) + 1
