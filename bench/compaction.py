"""Per-prompt overhead of a long thread, before and after a compaction: the agent's own time for
one prompt (everything but the model, which answers at once: the log, its file, message
derivation, the compaction estimate) at turn 1, at turn 500, and right after `/compact` at turn
500.

    python bench/compaction.py [--turns 500] [--sample 20]

The anchor is the same session's first prompts, in the same run: the ratios say how much a prompt
costs more at turn 500 than at turn 1, and how much of that a compaction gives back (the history
the model is sent shrinks to the summary, the kept user messages and what follows).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from acp_agent.agent import Agent
from acp_agent.agent.keys import AGENTS
from acp_agent.commands import COMMANDS
from acp_agent.kernel import Context, Row, compose
from acp_agent.llm.request import LlmRequest, derive_messages
from acp_agent.llm.service import STREAM
from acp_agent.session.content import (
    BlockEnd,
    BlockStart,
    Finish,
    FinishReason,
    StreamChunk,
    TextBlock,
    TextContent,
    TextDelta,
    Usage,
    UsageChunk,
)

ANSWER = "Done: the change is in place and the tests pass. " * 4
"""What the model answers each prompt (about 200 characters, in 4 deltas)."""
PROMPT = "Please make the next small change to the project and run the tests afterwards. "


async def instant(request: LlmRequest, next: Any) -> AsyncIterator[StreamChunk]:
    async def stream() -> AsyncIterator[StreamChunk]:
        yield BlockStart(index=0, block_type="text")
        for piece in range(4):
            yield TextDelta(index=0, text=ANSWER[piece * 50 : (piece + 1) * 50])
        yield BlockEnd(index=0, block=TextBlock(text=ANSWER))
        yield UsageChunk(usage=Usage(input_tokens=1000, output_tokens=50))
        yield Finish(reason=FinishReason(kind="stop"))

    return stream()


def composition(sessions: Path) -> Context:
    ctx = compose(
        [
            Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(sessions)}),
            Row(id="llm", name="acp_agent.llm.service"),
            Row(id="tools", name="acp_agent.tools.plugin"),
            Row(id="agents", name="acp_agent.agent.plugin", config={"provider": "bench", "model": "bench"}),
            Row(id="commands", name="acp_agent.commands.plugin"),
            Row(id="compaction", name="acp_agent.compaction.plugin"),
        ]
    )
    ctx.events.on(STREAM, instant)
    return ctx


async def prompt(agent: Agent, number: int) -> float:
    """One prompt's turn, in seconds."""
    started = time.perf_counter()
    await agent.followup([TextContent(text=f"{PROMPT}({number})")]).wait()
    return time.perf_counter() - started


async def sample(agent: Agent, first: int, count: int) -> float:
    """The median of `count` prompts from turn `first`, in milliseconds."""
    return statistics.median([await prompt(agent, first + i) for i in range(count)]) * 1000


async def measure(turns: int, count: int, sessions: Path) -> dict[str, Any]:
    ctx = composition(sessions)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(sessions))
        first = await sample(agent, 1, count)
        for number in range(count + 1, turns):
            await prompt(agent, number)
        before_messages = len(derive_messages(agent.session.events))
        before = await sample(agent, turns, count)
        await ctx.get(COMMANDS).start(agent, [TextContent(text="/compact")]).wait()
        after_messages = len(derive_messages(agent.session.events))
        after = await sample(agent, turns + count + 1, count)
        events = len(agent.session.events)
    return {
        "first": first,
        "before": before,
        "after": after,
        "before_messages": before_messages,
        "after_messages": after_messages,
        "events": events,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--sample", type=int, default=20, help="prompts per median")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as sessions:
        figures = anyio.run(measure, args.turns, args.sample, Path(sessions))
    print(f"machine: nproc {os.cpu_count()}, Python {platform.python_version()}, {sys.platform}")
    print(f"a prompt at turn 1:                 {figures['first']:7.2f} ms (anchor)")
    print(
        f"a prompt at turn {args.turns}:               {figures['before']:7.2f} ms"
        f"  {figures['before'] / figures['first']:5.2f}x the anchor  ({figures['before_messages']} messages sent)"
    )
    print(
        f"after /compact at turn {args.turns}:         {figures['after']:7.2f} ms"
        f"  {figures['after'] / figures['first']:5.2f}x the anchor  ({figures['after_messages']} messages sent)"
    )
    print(f"the log holds {figures['events']} events")


if __name__ == "__main__":
    main()
