"""The recorded DeepSeek calls of the upstream corpus, rebuilt as the server-sent events DeepSeek
sent for them (inverting the translation): what the SSE tests and `bench/sse.py` read."""

from __future__ import annotations

from typing import Any

from acp_agent.llm.replay import ChunksEntry, derive_script, read_jsonl
from acp_agent.session.content import StreamChunk
from tests.paths import UPSTREAM

from .openai_server import DONE, chunk, content, finish, reasoning, tool, tools

FINISH = {"stop": "stop", "tool-calls": "tool_calls", "max-tokens": "length"}


def sse_frames(chunks: list[StreamChunk]) -> list[bytes]:
    """The events of one recorded call, each a frame of its own (as a provider streams them)."""
    frames = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    wire: dict[int, int] = {}
    named: set[str] = set()
    usage: dict[str, Any] | None = None
    for c in chunks:
        if c.type == "block-start" and c.block_type == "tool-call":
            wire[c.index] = len(wire)
        elif c.type == "reasoning-delta":
            frames.append(reasoning(c.text))
        elif c.type == "text-delta":
            frames.append(content(c.text))
        elif c.type == "tool-call-delta":
            first = c.id not in named
            named.add(c.id)
            frames.append(tools(tool(wire[c.index], c.arguments_delta, id=c.id if first else None, name=c.name)))
        elif c.type == "usage":
            u = c.usage
            usage = {
                "prompt_tokens": u.input_tokens + (u.cache_read_tokens or 0),
                "completion_tokens": u.output_tokens,
                "prompt_cache_hit_tokens": u.cache_read_tokens,
                "prompt_cache_miss_tokens": u.input_tokens,
                "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            }
        elif c.type == "finish":
            frames += [finish(FINISH[c.reason.kind], usage), DONE]
    return frames


def as_sse(chunks: list[StreamChunk]) -> bytes:
    return b"".join(sse_frames(chunks))


def recorded_calls() -> list[tuple[str, list[StreamChunk]]]:
    """Each recorded model call of the corpus (none when it is absent), labelled by log and index."""
    calls = []
    for path in sorted(UPSTREAM.glob("*/session*.jsonl")) if UPSTREAM.is_dir() else []:
        for i, entry in enumerate(derive_script(read_jsonl(path), path.name)):
            assert isinstance(entry, ChunksEntry)
            calls.append((f"{path.parent.name}/{path.name}#{i}", entry.chunks))
    return calls
