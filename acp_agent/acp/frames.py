"""Incoming bytes to frames, and what makes a parsed frame unusable before any handler sees it.

Pure functions (no I/O), shared by the connection's reader: `split_frames` cuts the byte stream at
newlines without ever holding more than `limit` bytes of one frame; `parse` reads strict JSON
(no `NaN`, no nesting past the parser's stack); `envelope_problem` and `content_problem` say what
makes a parsed request or answer unusable, so that it is refused with its own error instead of
failing deep inside a handler, the session log or the model request.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Final

MAX_FRAME_BYTES: Final = 64 * 1024 * 1024
"""The default `maxFrameBytes`: a longer frame is skipped unread."""
MAX_NESTING: Final = 128
"""How deep a frame's arrays and objects may nest. Far more than ACP needs; well inside what the
session log's serializer takes (about 255), so a frame that is accepted can always be logged."""
MAX_BATCH: Final = 1000
"""Requests one batch may hold (ACP clients send none; a huge one would be answered item by item)."""

OVERSIZED: Final = None
"""What `split_frames` yields in place of a frame longer than its limit."""

# A lone surrogate can only enter through a `\uD8xx`-`\uDFxx` escape (invalid raw UTF-8 is decoded
# to U+FFFD first): frames without one are not searched string by string.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


async def split_frames(chunks: AsyncIterable[bytes], limit: int) -> AsyncIterator[bytes | None]:
    """The newline-terminated frames of a byte stream (a last unterminated one included), each
    without its newline; `OVERSIZED` for a frame of more than `limit` bytes, whose bytes are
    dropped as they arrive, so memory stays bounded by `limit` plus one chunk."""
    buffer = bytearray()
    skipping = False  # inside a frame already reported as oversized: drop up to its newline
    async for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if skipping:
                skipping = False
            elif len(buffer) + end - start > limit:
                buffer.clear()
                yield OVERSIZED
            else:
                buffer += chunk[start:end]
                yield bytes(buffer)
                buffer.clear()
            start = end + 1
        if not skipping and start < len(chunk):
            if len(buffer) + len(chunk) - start > limit:
                buffer.clear()
                skipping = True
                yield OVERSIZED  # answered now, not when (if ever) its newline arrives
            else:
                buffer += chunk[start:]
    if buffer:
        yield bytes(buffer)


class ParseError(ValueError):
    """A frame that is not (strict) JSON; the message says why."""


def _no_constant(name: str) -> Any:
    raise ParseError(f"{name} is not JSON")


# One decoder for every frame: `json.loads` with an option builds a decoder and its scanner per
# call, and the scanner reads the decoder's options by names it makes anew each time, which the
# interpreter's attribute cache then keeps (hundreds of small strings left behind by requests
# long gone). It also halves a frame's parse (2.3 us instead of 4.1 for a prompt's).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def parse(text: str) -> Any:
    """Strict JSON: `NaN` and `Infinity` refused, and nesting past the parser's stack a
    `ParseError` rather than a `RecursionError`."""
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise ParseError("nested deeper than the JSON parser allows") from None
    except ParseError:
        raise
    except ValueError as exc:  # json's own message says where
        raise ParseError(str(exc)) from None


def is_request_id(value: Any) -> bool:
    """ACP's RequestId: a string, an int64 or null (not a boolean, not a fraction)."""
    return value is None or isinstance(value, str) or (type(value) is int and -(2**63) <= value < 2**63)


def envelope_problem(frame: Any) -> str | None:
    """Why `frame` is not a JSON-RPC 2.0 request or notification, or None when it is one."""
    if not isinstance(frame, dict):
        return "a request is a JSON object"
    if frame.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not isinstance(frame.get("method"), str):
        return "method must be a string"
    if "params" in frame and not isinstance(frame["params"], (dict, list)):
        return "params must be an object or an array"
    if "id" in frame and not is_request_id(frame["id"]):
        return "id must be a string, an integer or null"
    return None


def content_problem(value: Any, where: str, text: str) -> str | None:
    """What in `value` (a frame's params or result, found at `where`) no handler can use: nesting
    past `MAX_NESTING`, or a lone surrogate in a string (not Unicode: it cannot be logged, encoded
    or sent on); None when there is nothing. `text` is the frame as read, for a quick first look."""
    check_text = _SURROGATE_ESCAPE.search(text) is not None
    # Iterative, so no depth of input can exhaust the stack; paths are built only for a finding.
    stack: list[tuple[Any, int, Any]] = [(value, 1, (where,))]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, str):
            if check_text and (found := _surrogate(node)) is not None:
                return f"{_path(path)}: {found}"
            continue
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if depth > MAX_NESTING:  # the path would be as long as the nesting: name the root
            return f"{where}: nested deeper than {MAX_NESTING} levels"
        for key, item in items:
            if check_text and isinstance(key, str) and (found := _surrogate(key)) is not None:
                return f"{_path(path)}: a key holds {found.removeprefix('holds ')}"
            if isinstance(item, (str, dict, list)):
                stack.append((item, depth + 1, (path, key)))
    return None


def _surrogate(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone surrogate (U+{ord(text[exc.start]):04X}), which is not Unicode text"
    return None


def _path(path: Any) -> str:
    keys: list[Any] = []
    while len(path) == 2:
        path, key = path
        keys.append(key)
    out = str(path[0])
    for key in reversed(keys):
        out += f"[{key}]" if isinstance(key, int) else f".{key}"
    return out
