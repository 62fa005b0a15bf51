"""`acp-agent demo`: replay a bundled scenario through the real server and print it readably.

Keyless and offline: the model's side comes from the scenario's recorded session logs, while
everything else (the agent loop, two helpers running at once, the bash tool reading a scratch copy
of the workspace, a forked helper, the ACP wire) is the real thing.

The print is the tree view every snapshot starts with (`summary.py`), prompts only: the parent's
thoughts and messages, its tool calls, and under each delegating call the child's own tool calls
and the result the parent got; then the stop reason.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

import anyio

from acp_agent.snapshot.runner import packaged, run_scenario
from acp_agent.snapshot.summary import Tree
from acp_agent.snapshot.transcript import interleave

SCENARIO = "delegation"


def demo_dir() -> Path:
    return packaged("demo") / SCENARIO


def run_demo(out: TextIO | None = None) -> int:
    out = out or sys.stdout
    with tempfile.TemporaryDirectory(prefix="acp-agent-demo-") as workdir:
        result = anyio.run(run_scenario, demo_dir(), Path(workdir))
    print(f"acp-agent demo: the bundled scenario {SCENARIO!r}, replayed through the real server\n", file=out)
    for line in Tree(result.logs, color=out.isatty(), requests=False).render(interleave(result)):
        print(line, file=out)
    for failure in result.failures:
        print(f"failure: {failure}", file=sys.stderr)
    return 1 if result.failures else 0
