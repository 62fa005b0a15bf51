"""The benchmarks' model: it generates each answer's deltas as they stream and holds no script.

A model that kept a 100k-delta answer as chunk models (the replay and scripted models compile
their scripts ahead, about 55 MB for such an answer) would be what fills the server's memory, and
one that encoded the request would add its own cost to the server's. This one makes each answer's
chunks as the agent asks for the next one, and reads nothing of the request but whether the last
message is a tool result (then it answers; otherwise, with `tool` set, it first calls the tool).
Its deltas are made once per word and yielded again wherever the word comes back, so a delta
costs it what one costs the replay model, which yields the models it compiled ahead: validating
a model for every delta would add the model's own time (about a tenth of a delta's) to what the
benchmarks measure of the server.

Like the replay model, it passes through the event loop before each chunk (`perCheckpoint`
chunks per pass: a network read that brings several events at once), so a cancel lands between
chunks and the server cannot hold the whole answer before writing any of it.

A loader plugin, imported by the benchmarks' servers with `bench/` on `PYTHONPATH`, in the model
row of the record composition (`composition` writes that config):

    - include: cordis.record.yml
    - id: model
      name: benchmodel
      config: {text: 100000, reasoning: 0, tool: todo_write, arguments: {...}}
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from itertools import chain, cycle, islice
from pathlib import Path
from typing import Any, Literal

import anyio
import yaml

from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.service import STREAM
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

BENCH = Path(__file__).resolve().parent
RECORD = BENCH.parent / "cordis.record.yml"
WORDS = "the quick brown fox jumps over the lazy dog while a model streams its answer token by token".split()


def word(i: int) -> str:
    """The `i`-th delta: one word and its space, as a model streams text."""
    return WORDS[i % len(WORDS)] + " "


def words(count: int) -> str:
    """The text of `count` deltas."""
    return "".join(word(i) for i in range(count))


name = "benchmodel"
inject = ("llm",)


class Config(PluginConfig):
    text: int = 40
    """Text deltas per answer."""
    reasoning: int = 0
    """Reasoning deltas before the text."""
    tool: str | None = None
    """A tool each turn calls once (then the model answers its result)."""
    arguments: dict[str, Any] = {}
    per_checkpoint: int = 1
    """Chunks per pass through the event loop."""
    times: str | None = None
    """A file to which each call appends the seconds the model spent making its chunks."""


class GeneratedModel:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.calls = 0

    async def listener(self, request: LlmRequest, next: Callable[[], Awaitable[Any]]) -> AsyncIterator[StreamChunk]:
        self.calls += 1
        answered = bool(request.messages) and request.messages[-1].role == "tool"
        if self.config.tool is not None and not answered:
            return self._paced(self._tool_call(self.calls))
        return self._paced(self._answer())

    async def _paced(self, chunks: Iterator[StreamChunk]) -> AsyncIterator[StreamChunk]:
        if self.config.times is not None:  # the model's own time, for the benchmark to take out
            chunks = _timed(chunks, self.config.times)
        every = self.config.per_checkpoint
        for count, chunk in enumerate(chunks):
            if count % every == 0:
                await anyio.lowlevel.checkpoint()
            yield chunk

    def _answer(self) -> Iterator[StreamChunk]:
        """The answer's chunks: the reasoning's block, if any, the text's, the usage and the
        finish, iterated without a Python frame per chunk (as the replay model iterates its list)."""
        blocks: list[tuple[Literal["reasoning", "text"], int]] = (
            [("reasoning", self.config.reasoning)] if self.config.reasoning else []
        )
        blocks.append(("text", self.config.text))
        usage = Usage(input_tokens=100, output_tokens=self.config.text + self.config.reasoning)
        ending: list[StreamChunk] = [UsageChunk(usage=usage), Finish(reason=FinishReason(kind="stop"))]
        return chain(*(_block(index, kind, count) for index, (kind, count) in enumerate(blocks)), ending)

    def _tool_call(self, call: int) -> Iterator[StreamChunk]:
        assert self.config.tool is not None
        call_id, arguments = f"call_{call}", json.dumps(self.config.arguments)
        yield BlockStart(index=0, block_type="tool-call")
        yield ToolCallDelta(index=0, id=call_id, name=self.config.tool, arguments_delta=arguments)
        yield BlockEnd(index=0, block=ToolCallBlock(id=call_id, name=self.config.tool, arguments=arguments))
        yield UsageChunk(usage=Usage(input_tokens=100, output_tokens=10))
        yield Finish(reason=FinishReason(kind="tool-calls"))


def composition(path: Path, **config: Any) -> Path:
    """Write to `path` the record composition with this model in its model row."""
    rows = [{"include": str(RECORD)}, {"id": "model", "name": name, "config": config}]
    path.write_text(yaml.safe_dump(rows), encoding="utf-8")
    return path


def machine() -> str:
    """The machine a figure was measured on: cores, Python, and how busy it was (the load average
    over the last minute: a figure taken beside other work is noisier, the ratios less so)."""
    return f"nproc {os.cpu_count()}, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}"


def server_env(sessions: Path) -> dict[str, str]:
    """The environment of a benchmark's server: this directory importable, logs under `sessions`."""
    path = os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "ACP_AGENT_SESSIONS": str(sessions)}


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.events.on(STREAM, GeneratedModel(config).listener)


def _block(index: int, kind: Literal["reasoning", "text"], count: int) -> Iterator[StreamChunk]:
    """A block of `count` one-word deltas, one model per word, each yielded again wherever its
    word comes back (see the module), between the block's start and its end."""
    delta, block = (TextDelta, TextBlock) if kind == "text" else (ReasoningDelta, ReasoningBlock)
    deltas: list[StreamChunk] = [delta(index=index, text=word(i)) for i in range(len(WORDS))]
    end = BlockEnd(index=index, block=block(text=words(count)))
    return chain([BlockStart(index=index, block_type=kind)], islice(cycle(deltas), count), [end])


def _timed(chunks: Iterator[StreamChunk], times: str) -> Iterator[StreamChunk]:
    """`chunks`, and once they are all made, the seconds their making took appended to `times`."""
    spent = 0.0
    while True:
        start = time.perf_counter()
        chunk = next(chunks, None)
        spent += time.perf_counter() - start
        if chunk is None:
            break
        yield chunk
    with open(times, "a", encoding="utf-8") as file:
        file.write(f"{spent}\n")
