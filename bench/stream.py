"""Stream benchmark: how fast the OpenAI-compatible adapter turns a model's SSE stream into stream
chunks, against the floor of reading the same bytes and splitting them into lines with httpx alone.

A fake server on 127.0.0.1 (in this process) serves one recorded-shape DeepSeek answer: reasoning,
text and a tool call, one token an event, `--events` events in all. Each measurement makes the
same request and reads the whole answer; the two alternate, and the median of `--runs` of each
is printed. Two framings:

- `per-event`: one HTTP chunk per event, as a provider streams tokens (the realistic case, and
  the one gated: the adapter must keep at least half the floor's rate, ratio >= 0.5);
- `bulk`: the body in 64 KiB HTTP chunks, so little but parsing is left to measure (a reference:
  there the floor is C-level line splitting, while the adapter parses each event's JSON and
  validates a pydantic chunk for it).

    python bench/stream.py [--events 20000] [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.kernel import Context  # noqa: E402
from acp_agent.llm.openai_compat import Config, OpenAICompat  # noqa: E402
from acp_agent.llm.request import LlmRequest, UserMessage  # noqa: E402
from acp_agent.session.content import TextContent  # noqa: E402

FLOOR_RATIO = 0.5
GATED = "per-event"
KEY_ENV = "ACP_AGENT_BENCH_KEY"
WORDS = "the quick brown fox jumps over the lazy dog while a model streams its answer token by token".split()


def event(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
    obj: dict[str, Any] = {
        "id": "3f0e5a9c-5d1b-4b8e-9a57-0c1d2e3f4a5b",
        "object": "chat.completion.chunk",
        "created": 1718345013,
        "model": "deepseek-chat",
        "system_fingerprint": "fp_ffc7281d48_prod0820_fp8_kvcache",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    if usage is not None:
        obj["usage"] = usage
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def answer_events(count: int) -> list[bytes]:
    """`count` events: a third reasoning, a third text, a third tool-call arguments, then the end."""
    third = max(1, count // 3)
    events = [event({"role": "assistant", "content": None, "reasoning_content": ""})]
    events += [event({"reasoning_content": " " + WORDS[i % len(WORDS)]}) for i in range(third)]
    events += [event({"content": " " + WORDS[i % len(WORDS)]}) for i in range(third)]
    call = {"index": 0, "id": "call_0", "type": "function", "function": {"name": "bash", "arguments": ""}}
    events.append(event({"tool_calls": [call]}))
    events += [
        event({"tool_calls": [{"index": 0, "function": {"arguments": f"x{i}"}}]}) for i in range(count - 2 * third)
    ]
    usage = {"prompt_tokens": 900, "completion_tokens": count, "prompt_cache_hit_tokens": 768}
    events.append(event({"content": ""}, "tool_calls", usage))
    events.append(b"data: [DONE]\n\n")
    return events


def chunked(pieces: list[bytes]) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"


def framings(events: list[bytes]) -> dict[str, bytes]:
    body = b"".join(events)
    bulk = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    return {"per-event": chunked(events), "bulk": chunked(bulk)}


async def serve(listener: Any, bodies: dict[str, bytes]) -> None:
    async def handle(stream: SocketStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        async with stream:
            try:
                while True:
                    head = (await reader.receive_until(b"\r\n\r\n", 1 << 20)).decode("latin-1")
                    length = next(
                        int(line.split(":", 1)[1])
                        for line in head.split("\r\n")
                        if line.lower().startswith("content-length:")
                    )
                    request = json.loads(await reader.receive_exactly(length))
                    body = bodies[request["metadata"]["framing"]]
                    await stream.send(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + body
                    )
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                pass

    await listener.serve(handle)


def request(framing: str) -> LlmRequest:
    return LlmRequest(
        provider="deepseek",
        model="deepseek-chat",
        system="bench",
        messages=[UserMessage(content=[TextContent(text=framing)])],
        route="s1",
        session_id="bench",
    )


async def time_adapter(adapter: OpenAICompat, framing: str) -> tuple[float, int]:
    async def unused() -> Any:
        raise AssertionError("the adapter serves provider deepseek")

    start = time.perf_counter()
    count = 0
    async for _ in await adapter.listener(request(framing), unused):
        count += 1
    return time.perf_counter() - start, count


async def time_httpx(adapter: OpenAICompat, framing: str) -> tuple[float, int]:
    client = adapter.client()
    body = json.dumps({"metadata": {"framing": framing}}).encode()
    start = time.perf_counter()
    count = 0
    async with client.stream("POST", adapter.url, content=body) as response:
        async for line in response.aiter_lines():
            count += line.startswith("data:")
    return time.perf_counter() - start, count


async def medians(
    floor: Callable[[], Awaitable[tuple[float, int]]], adapter: Callable[[], Awaitable[tuple[float, int]]], runs: int
) -> tuple[tuple[float, int], tuple[float, int]]:
    """Median seconds (and the count) of each; the two alternate, so a change of load hits both."""
    await floor()  # warm up: connection, imports, pydantic validators
    await adapter()
    floors, adapters = [], []
    for _ in range(runs):
        floors.append(await floor())
        adapters.append(await adapter())
    return (
        (statistics.median(s for s, _ in floors), floors[0][1]),
        (statistics.median(s for s, _ in adapters), adapters[0][1]),
    )


async def main_async(events: int, runs: int) -> float:
    bodies = framings(answer_events(events))
    os.environ[KEY_ENV] = "bench-key"
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    # `metadata.framing` tells the server which body to send; the adapter passes it through extraBody.
    gated = 0.0
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(serve, listener, bodies)
        print(f"events per answer: {events + 3}; median of {runs} runs")
        for framing in bodies:
            config = Config(
                base_url=f"http://127.0.0.1:{port}", api_key_env=KEY_ENV, extra_body={"metadata": {"framing": framing}}
            )
            adapter = OpenAICompat(Context(), config)
            (floor_s, lines), (adapter_s, chunks) = await medians(
                partial(time_httpx, adapter, framing), partial(time_adapter, adapter, framing), runs
            )
            await adapter.aclose()
            floor_rate, adapter_rate = lines / floor_s, chunks / adapter_s
            ratio = adapter_rate / floor_rate
            if framing == GATED:
                gated = ratio
            print(f"[{framing}]")
            print(
                f"  httpx alone (aiter_lines):     {floor_rate:12,.0f} events/s  "
                f"({lines} data lines in {floor_s * 1000:.1f} ms)"
            )
            print(
                f"  adapter -> StreamChunks:       {adapter_rate:12,.0f} chunks/s  "
                f"({chunks} chunks in {adapter_s * 1000:.1f} ms)"
            )
            floor_note = f"floor {FLOOR_RATIO}" if framing == GATED else "reference, not gated"
            print(f"  ratio:                         {ratio:12.2f} ({floor_note})")
        tasks.cancel_scope.cancel()
    return gated


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    ratio = anyio.run(main_async, args.events, args.runs)
    return 0 if ratio >= FLOOR_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
