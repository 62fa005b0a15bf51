"""SSE decoder benchmark: the adapter's own `SseDecoder` against the `httpx-sse` package (installed
with `mcp`), bytes in, events out, and speed, in the same run.

The input is every recorded DeepSeek call of the upstream corpus (`../shared/upstream`), rebuilt as
the server-sent events DeepSeek sent for it (`tests/unit/llm/recorded_sse.py`), each stream served
through a real `httpx.Response` in three framings:

- `per-event`: one HTTP chunk per event, as a provider streams tokens;
- `bulk`: the body in 64 KiB chunks;
- `7-byte`: the body cut every 7 bytes, so lines and multi-byte characters are split.

Both must give the same events (their `data`, in order) on every stream and framing. Then each
decodes all the streams `--repeat` times; the median of `--runs` (the three alternate) is printed
with the ratio to the anchor, reading the same bytes without decoding them (`aiter_bytes` alone).
Last, the inputs where the two disagree, each fed whole to both.

    python bench/sse.py [--runs 5] [--repeat 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx_sse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.llm.openai_wire import SseDecoder  # noqa: E402
from tests.unit.llm.recorded_sse import recorded_calls, sse_frames  # noqa: E402

Framing = Callable[[list[bytes]], list[bytes]]
FRAMINGS: dict[str, Framing] = {
    "per-event": lambda frames: frames,
    "bulk": lambda frames: cut(b"".join(frames), 64 * 1024),
    "7-byte": lambda frames: cut(b"".join(frames), 7),
}
EDGES: dict[str, bytes] = {
    "the last event without its blank line": b"data: one\n\ndata: [DONE]",
    "a lone CR as the line end": b"data: one\r\rdata: [DONE]\r\r",
    "an event with a name but no data": b"event: ping\n\ndata: one\n\n",
    "an event with only an id": b"id: 7\n\ndata: one\n\n",
    "a data line without a colon": b"data\n\ndata: one\n\n",
    "bytes that are not UTF-8": b'data: {"text": "\xff"}\n\n',
}


def cut(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


class Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def response(pieces: list[bytes]) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Pieces(pieces))


async def ours(pieces: list[bytes]) -> list[bytes]:
    decoder = SseDecoder()
    events: list[bytes] = []
    async for piece in response(pieces).aiter_bytes():
        events += decoder.feed(piece)
    events += decoder.close()
    return events  # bytes: the JSON parser decodes them (and refuses what is not UTF-8)


async def library(pieces: list[bytes]) -> list[str]:
    return [event.data async for event in httpx_sse.EventSource(response(pieces)).aiter_sse()]


async def anchor(pieces: list[bytes]) -> list[bytes]:
    async for _ in response(pieces).aiter_bytes():
        pass
    return []


async def timed(
    decode: Callable[[list[bytes]], Awaitable[list[Any]]], streams: list[list[bytes]], repeat: int
) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for pieces in streams:
            await decode(pieces)
    return time.perf_counter() - start


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    calls = recorded_calls()
    if not calls:
        print("the upstream corpus (../shared/upstream) is absent: nothing to compare")
        return 1
    frames = [sse_frames(chunks) for _, chunks in calls]
    events = sum(len(f) for f in frames)
    size = sum(len(piece) for f in frames for piece in f)
    print(f"machine: nproc {os.cpu_count()}, Python {platform.python_version()}, httpx-sse {httpx_sse.__version__}")
    print(
        f"input: {len(calls)} recorded calls, {events} events, {size} bytes; {args.runs} runs of {args.repeat} passes\n"
    )

    same = True
    for name, framing in FRAMINGS.items():
        for (label, _), call in zip(calls, frames, strict=False):
            if [event.decode() for event in await ours(framing(call))] != await library(framing(call)):
                print(f"DIFFERENT events: {label} ({name})")
                same = False
    print(f"events: {'the same' if same else 'NOT the same'} on every stream and framing\n")

    print(
        f"{'framing':<10} {'anchor ms':>10} {'ours ms':>9} "
        f"{'httpx-sse ms':>13} {'ours/anchor':>12} {'httpx-sse/ours':>15}"
    )
    for name, framing in FRAMINGS.items():
        streams = [framing(call) for call in frames]
        times: dict[str, list[float]] = {"anchor": [], "ours": [], "library": []}
        for _ in range(args.runs):
            for key, decode in (("anchor", anchor), ("ours", ours), ("library", library)):
                times[key].append(await timed(decode, streams, args.repeat))
        base, own, lib = (statistics.median(times[key]) for key in ("anchor", "ours", "library"))
        print(
            f"{name:<10} {base * 1e3:>10.1f} {own * 1e3:>9.1f} "
            f"{lib * 1e3:>13.1f} {own / base:>11.2f}x {lib / own:>14.2f}x"
        )

    print("\nwhere they differ (each input fed whole):")
    for label, body in EDGES.items():
        print(f"- {label}: {body!r}")
        print(f"    ours      {await ours([body])!r}")
        print(f"    httpx-sse {await library([body])!r}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
