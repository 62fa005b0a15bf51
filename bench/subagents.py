"""Subagent benchmark: spawn-to-publish latency, a full child round trip (a one-step child whose
model answer is canned), and memory after spawning and disposing many children.

    python bench/subagents.py [--children 1000]

Budgets: publish under 5 ms median; no memory growth that scales with the disposed children
(the live objects and the interpreter's allocated memory blocks stay flat from one window of
children to the next).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from acp_agent.kernel import Context, Row, compose
from acp_agent.session.content import Finish, FinishReason, StreamChunk, TextDelta
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.service import STREAM
from acp_agent.subagents import SubagentRequest
from acp_agent.agent.keys import AGENTS
from acp_agent.subagents.registry import SUBAGENTS


async def canned(request: LlmRequest, next: Any) -> AsyncIterator[StreamChunk]:
    async def stream() -> AsyncIterator[StreamChunk]:
        yield TextDelta(index=0, text="done")
        yield Finish(reason=FinishReason(kind="stop"))

    return stream()


def composition(sessions: Path) -> Context:
    ctx = compose(
        [
            Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(sessions)}),
            Row(id="llm", name="acp_agent.llm.service"),
            Row(id="tools", name="acp_agent.tools.plugin"),
            Row(id="agents", name="acp_agent.agent.plugin", config={"provider": "bench", "model": "bench"}),
            Row(id="subagents", name="acp_agent.subagents.plugin"),
            Row(id="spawn", name="acp_agent.subagents.spawn"),
        ]
    )
    ctx.events.on(STREAM, canned)
    return ctx


async def measure(children: int, sessions: Path) -> dict[str, float]:
    ctx = composition(sessions)
    async with ctx.running():
        parent = await ctx.get(AGENTS).create(cwd=str(sessions))
        request = SubagentRequest(parent=parent, prompt="answer")
        publish: list[float] = []
        round_trip: list[float] = []

        async def one(record: bool) -> None:
            began = time.perf_counter()
            run = await ctx.get(SUBAGENTS).start("spawn", request)
            published = time.perf_counter()
            await run.result()
            await run.dispose()
            if record:
                publish.append(published - began)
                round_trip.append(time.perf_counter() - began)

        for _ in range(100):  # warm-up: caches, lazily built validators
            await one(record=False)
        for _ in range(children):
            await one(record=True)
        # Memory is watched apart from the timings, whose own lists would grow with the children.
        gc.collect()
        objects, blocks = [len(gc.get_objects())], [sys.getallocatedblocks()]
        for _ in range(2):  # two windows: the second shows the steady state
            for _ in range(children):
                await one(record=False)
            gc.collect()
            objects.append(len(gc.get_objects()))
            blocks.append(sys.getallocatedblocks())
        live = sum(1 for _ in ctx.get(AGENTS))
    return {
        "publish_ms": statistics.median(publish) * 1000,
        "round_trip_ms": statistics.median(round_trip) * 1000,
        "objects_first": objects[1] - objects[0],
        "objects_second": objects[2] - objects[1],
        "blocks_first": blocks[1] - blocks[0],
        "blocks_second": blocks[2] - blocks[1],
        "live_agents": live,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--children", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = anyio.run(measure, args.children, Path(tmp))
    print(f"children per window:           {args.children} (timed, then two windows watched for memory)")
    print(f"spawn to publish:              {figures['publish_ms']:7.2f} ms median (budget 5 ms)")
    print(f"child round trip:              {figures['round_trip_ms']:7.2f} ms median")
    print(f"live objects added, window 1:  {figures['objects_first']:7d}")
    print(f"live objects added, window 2:  {figures['objects_second']:7d}")
    print(f"memory blocks added, window 1: {figures['blocks_first']:7d}")
    print(f"memory blocks added, window 2: {figures['blocks_second']:7d}")
    print(f"agents still alive:            {figures['live_agents']:7d} (the parent)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
