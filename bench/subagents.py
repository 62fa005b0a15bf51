"""Subagent benchmark: spawn-to-publish latency, a full child round trip (a one-step child whose
model answer is canned), and memory after spawning and disposing many children; then background
children: 20 started at once, each messaged once, each settling twice (its notices wake the
parent), timed per child against the anchor of the same run, a one-shot child's round trip
(start, answer, dispose), with the memory each live background child holds.

    python bench/subagents.py [--children 1000] [--background 20]

Budgets: publish under 5 ms median; no memory growth that scales with the disposed children
(the live objects and the interpreter's allocated memory blocks stay flat from one window of
children to the next); a background child's two turns (start, settle, message, settle) under 2x
a one-shot child's round trip per child (two turns against its one).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from acp_agent.agent.keys import AGENTS
from acp_agent.kernel import Context, Row, compose
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.service import STREAM
from acp_agent.session.content import Finish, FinishReason, StreamChunk, TextContent, TextDelta
from acp_agent.subagents import SubagentRequest
from acp_agent.subagents.driver import InProcessRun
from acp_agent.subagents.keys import BACKGROUND
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


async def start_background(ctx: Context, parent: Any, request: SubagentRequest, children: int) -> list[Any]:
    """`children` background children of `parent`, started one after the other (they run at once)."""
    background, entries = ctx.get(BACKGROUND), []
    for _ in range(children):
        run = await ctx.get(SUBAGENTS).start("spawn", request._replace(background=True))
        assert isinstance(run, InProcessRun) and background.reserve(parent)
        entries.append(background.adopt(parent, run.child, run.ticket, "bench"))
    return entries


async def background_round(ctx: Context, parent: Any, request: SubagentRequest, children: int) -> float:
    """Seconds to start `children` background children, have each settle, message each, have each
    settle again, and let the parent's woken turns end."""
    began = time.perf_counter()
    entries = await start_background(ctx, parent, request, children)
    for entry in entries:
        await entry.agent.when_idle()
    for entry in entries:
        ctx.get(BACKGROUND).message(entry, [TextContent(text="again")])
    for entry in entries:
        await entry.agent.when_idle()
    await parent.when_idle()  # the turns the notices woke
    return time.perf_counter() - began


async def measure_background(children: int, sessions: Path) -> dict[str, float]:
    """`children` background children started together, messaged, settled twice each; the anchor:
    as many one-shot children, one after the other."""
    ctx = composition(sessions)
    async with ctx.running():
        agents = ctx.get(AGENTS)
        parent = await agents.create(cwd=str(sessions))
        request = SubagentRequest(parent=parent, prompt="answer")
        for _ in range(20):  # warm-up, as above
            run = await ctx.get(SUBAGENTS).start("spawn", request)
            await run.result()
            await run.dispose()
        began = time.perf_counter()
        for _ in range(children):
            run = await ctx.get(SUBAGENTS).start("spawn", request)
            await run.result()
            await run.dispose()
        one_shot = (time.perf_counter() - began) / children

        per_child = await background_round(ctx, parent, request, children) / children
        # The memory apart: tracing allocations slows everything down.
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        entries = await start_background(ctx, parent, request, children)
        for entry in entries:
            await entry.agent.when_idle()
        await parent.when_idle()
        gc.collect()
        held = (tracemalloc.get_traced_memory()[0] - before) / children
        tracemalloc.stop()
        turns = sum(1 for event in parent.session.events if event.type == "turn/end")
        await parent.dispose()
        left = sum(1 for _ in agents)
    return {
        "one_shot_ms": one_shot * 1000,
        "background_ms": per_child * 1000,
        "held_kb": held / 1024,
        "woken": turns,
        "left": left,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--children", type=int, default=1000)
    parser.add_argument("--background", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = anyio.run(measure, args.children, Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        back = anyio.run(measure_background, args.background, Path(tmp))
    print(f"children per window:           {args.children} (timed, then two windows watched for memory)")
    print(f"spawn to publish:              {figures['publish_ms']:7.2f} ms median (budget 5 ms)")
    print(f"child round trip:              {figures['round_trip_ms']:7.2f} ms median")
    print(f"live objects added, window 1:  {figures['objects_first']:7d}")
    print(f"live objects added, window 2:  {figures['objects_second']:7d}")
    print(f"memory blocks added, window 1: {figures['blocks_first']:7d}")
    print(f"memory blocks added, window 2: {figures['blocks_second']:7d}")
    print(f"agents still alive:            {figures['live_agents']:7d} (the parent)")
    print(f"background children:           {args.background:7d} (started at once, messaged once, settled twice each)")
    print(f"one-shot round trip (anchor):  {back['one_shot_ms']:7.2f} ms a child")
    print(
        f"background start..2nd settle:  {back['background_ms']:7.2f} ms a child "
        f"({back['background_ms'] / back['one_shot_ms']:.2f}x the anchor; budget 2x)"
    )
    print(f"memory a live background child: {back['held_kb']:6.1f} KB (traced: its agent, log, conversation, notice)")
    print(f"parent turns (notices woke):   {back['woken']:7d}; agents left after its dispose: {back['left']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
