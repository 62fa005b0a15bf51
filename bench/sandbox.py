"""Sandbox benchmark: what confining a command costs, through the server process. A prompt whose
one `bash` call runs `true` (the scripted model: the call, then an answer), timed from the
`session/prompt` to its answer, in a session in the Auto mode (the command runs behind the
sandbox's prefix, unasked) and in one in Full access (the anchor: no sandbox). The servers run
side by side, their prompts alternating, so all see the same machine. The launcher's own cost is
measured apart: `bash -c true` spawned directly, bare and behind each backend's prefix, and the
interpreter's bare start-up (`python -I -S -c pass`), the floor of the Landlock launcher.

    python bench/sandbox.py [--prompts 200] [--warmup 20]

Budget: a sandboxed command costs at most 15 ms more than an unconfined one (the median prompt's
difference).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmodel import machine
from client import Spawned

from acp_agent.sandbox import bubblewrap
from acp_agent.sandbox.backends import Setting, choose
from acp_agent.sandbox.service import Sandbox

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "cordis.record.yml"
BUDGET_MS = 15.0


def script(prompts: int) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for n in range(prompts):
        calls += [
            {"toolCalls": [{"id": f"call_{n}", "name": "bash", "arguments": {"command": "true"}}]},
            {"text": "Done."},
        ]
    return calls


class Server:
    """A server on a store of its own, with one session in `mode`, confining with `backend`."""

    def __init__(self, workdir: Path, prompts: int, mode: str, backend: str) -> None:
        workdir.mkdir()
        (workdir / "script.json").write_text(json.dumps(script(prompts)), encoding="utf-8")
        for name in ("sessions", "config", "cwd"):
            (workdir / name).mkdir()
        env = {
            **os.environ,
            "ACP_AGENT_SCRIPT": str(workdir / "script.json"),
            "ACP_AGENT_SESSIONS": str(workdir / "sessions"),
            "ACP_AGENT_CONFIG": str(workdir / "config"),
            "ACP_AGENT_SANDBOX": backend,
        }
        self.spawned = Spawned([sys.executable, "-m", "acp_agent", "--config", str(CONFIG)], env)
        self.spawned.request("initialize", {"protocolVersion": 1})
        self.session = self.spawned.request("session/new", {"cwd": str(workdir / "cwd"), "mcpServers": []})["sessionId"]
        self.spawned.request("session/set_mode", {"sessionId": self.session, "modeId": mode})

    def prompt(self) -> float:
        result = self.spawned.request(
            "session/prompt", {"sessionId": self.session, "prompt": [{"type": "text", "text": "Go."}]}
        )
        if result != {"stopReason": "end_turn"}:
            raise RuntimeError(f"the prompt answered {result}")
        return self.spawned.seconds


def spawn_median(argv: list[str], cwd: Path, runs: int) -> float:
    """The median seconds to spawn `argv` and wait for it."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    total = args.warmup + args.prompts
    backends: list[Setting] = ["landlock"]
    if bubblewrap.probe() is not None:
        backends.append("bubblewrap")
    with tempfile.TemporaryDirectory() as tmp:
        servers = {"full": Server(Path(tmp) / "full", total, "full", "landlock")}
        for backend in backends:
            servers[backend] = Server(Path(tmp) / backend, total, "auto", backend)
        times: dict[str, list[float]] = {name: [] for name in servers}
        for n in range(total):
            order = list(servers.items())
            for name, server in order if n % 2 else reversed(order):
                elapsed = server.prompt()
                if n >= args.warmup:
                    times[name].append(elapsed)
        for server in servers.values():
            server.spawned.close()
        cwd = Path(tmp)
        bare = spawn_median(["bash", "-c", "true"], cwd, args.prompts)
        interpreter = spawn_median([sys.executable, "-I", "-S", "-c", "pass"], cwd, args.prompts)
        prefixed = {}
        for backend in backends:
            prefix = Sandbox(backend).prefix("workspace-write", cwd, cwd)
            prefixed[backend] = spawn_median([*prefix, "bash", "-c", "true"], cwd, args.prompts)
    anchor = statistics.median(times["full"])
    print(machine())
    print(
        f"prompts: {args.prompts} each (after {args.warmup} warm-up), "
        f"one bash call of `true`; Landlock ABI {choose('landlock').abi}"
    )
    print(f"Full access, no sandbox (anchor): {anchor * 1000:7.2f} ms median a prompt")
    met = True
    for backend in backends:
        measured = statistics.median(times[backend])
        overhead = (measured - anchor) * 1000
        met = met and overhead <= BUDGET_MS
        print(
            f"Auto, sandboxed by {backend:<10}:  {measured * 1000:7.2f} ms median a prompt, "
            f"ratio {measured / anchor:.3f}, "
            f"overhead {overhead:+.2f} ms (budget {BUDGET_MS:g} ms: {'met' if overhead <= BUDGET_MS else 'NOT met'})"
        )
    print(f"spawning `bash -c true` alone:    {bare * 1000:7.2f} ms median")
    for backend, seconds in prefixed.items():
        print(
            f"  behind the {backend} prefix:  {seconds * 1000:7.2f} ms median "
            f"(the prefix's own cost {(seconds - bare) * 1000:+.2f} ms)"
        )
    print(
        f"spawning `python -I -S -c pass`:  {interpreter * 1000:7.2f} ms median "
        "(the interpreter's start-up: the Landlock launcher's floor)"
    )
    if "landlock" in prefixed:
        work = (prefixed["landlock"] - bare - interpreter) * 1000
        print(f"  the launcher's work beyond it (imports, rules, exec): {work:+.2f} ms")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
