"""Per-prompt overhead of a long thread, before and after a compaction: the agent's own time for
one prompt at turn 1, at turn 500, and right after `/compact` at turn 500. The packaged
composition runs in process with the benchmarks' model (`benchmodel.py`, which answers at once in
40 deltas), so what is timed is everything but the model: the log and its file, message
derivation, the compaction estimate, the plugins' hooks.

    python bench/compaction.py [--turns 500] [--sample 20]

The anchor is the same session's first prompts, in the same run: the ratios say how much a prompt
costs more at turn 500 than at turn 1, and how much of that a compaction gives back (the history
the model is sent shrinks to the summary, the kept user messages and what follows; the log keeps
every event).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import benchmodel

from acp_agent.agent import Agent
from acp_agent.agent.keys import AGENTS
from acp_agent.commands import COMMANDS
from acp_agent.kernel import Context, compose
from acp_agent.llm.request import derive_messages
from acp_agent.session.content import TextContent

PROMPT = "Please make the next small change to the project and run the tests afterwards. "


def composition(directory: Path) -> Context:
    """The packaged composition (as the record one has it) with the benchmarks' model, which
    answers each call in 40 deltas (the summary too: a model that always called a tool first
    would never write one)."""
    os.environ["ACP_AGENT_SESSIONS"] = str(directory / "sessions")
    return compose(benchmodel.composition(directory / "cordis.yml"))


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
