"""Child-session benchmark: what showing a child as a child session costs, through the server
process. A prompt whose one subagent call is answered at once (the scripted model: the parent
delegates, the child answers, the parent answers), timed from the `session/prompt` to its answer,
by a client that advertises `clientCapabilities.subagents` (the child is announced, told its task
and answers as `session_message`s, ends idle) and by one that does not (the anchor: the child's
answer grows on the delegating card). The two servers run side by side, their prompts
alternating, so both see the same machine.

    python bench/child_sessions.py [--prompts 200] [--warmup 20]

Budget: the announce and the messages add under 10% (ratio under 1.10).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmodel import machine
from client import Spawned

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "cordis.record.yml"
BUDGET = 1.10


def script(prompts: int) -> dict[str, list[dict[str, Any]]]:
    """Per prompt: the parent delegates (`call_<n>`), its child answers, the parent answers."""
    parent: list[dict[str, Any]] = []
    routes: dict[str, list[dict[str, Any]]] = {"s1": parent}
    for n in range(1, prompts + 1):
        task = {"description": f"Answer {n}", "prompt": f"Reply with the number {n}."}
        parent += [{"toolCalls": [{"id": f"call_{n}", "name": "subagent", "arguments": task}]}, {"text": "Done."}]
        routes[f"s1/call_{n}"] = [{"text": str(n)}]
    return routes


class Server:
    """A server on a store of its own, with one session, for a client with or without child sessions."""

    def __init__(self, workdir: Path, prompts: int, child_sessions: bool) -> None:
        workdir.mkdir()
        (workdir / "script.json").write_text(json.dumps(script(prompts)), encoding="utf-8")
        (workdir / "sessions").mkdir()
        (workdir / "config").mkdir()
        env = {
            **os.environ,
            "ACP_AGENT_SCRIPT": str(workdir / "script.json"),
            "ACP_AGENT_SESSIONS": str(workdir / "sessions"),
            "ACP_AGENT_CONFIG": str(workdir / "config"),
            "ACP_AGENT_PERMISSIONS": "allow",
        }
        self.spawned = Spawned([sys.executable, "-m", "acp_agent", "--config", str(CONFIG)], env)
        self.frames = 0
        """Every frame read so far, answers included."""
        capabilities = {"subagents": {}} if child_sessions else {}
        self.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        self.session = self.call("session/new", {"cwd": str(workdir), "mcpServers": []})["sessionId"]

    def call(self, method: str, params: dict[str, Any]) -> Any:
        result = self.spawned.request(method, params)
        self.frames += self.spawned.frames + 1
        return result

    def prompt(self) -> float:
        """Seconds from the prompt to its answer."""
        result = self.call("session/prompt", {"sessionId": self.session, "prompt": [{"type": "text", "text": "Go."}]})
        if result != {"stopReason": "end_turn"}:
            raise RuntimeError(f"the prompt answered {result}")
        return self.spawned.seconds

    def close(self) -> None:
        self.spawned.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    total = args.warmup + args.prompts
    with tempfile.TemporaryDirectory() as tmp:
        plain = Server(Path(tmp) / "plain", total, child_sessions=False)
        sessions = Server(Path(tmp) / "sessions", total, child_sessions=True)
        times: dict[str, list[float]] = {"plain": [], "sessions": []}
        for n in range(total):
            for name, server in (
                (("plain", plain), ("sessions", sessions)) if n % 2 else (("sessions", sessions), ("plain", plain))
            ):
                elapsed = server.prompt()
                if n >= args.warmup:
                    times[name].append(elapsed)
        frames = {"plain": plain.frames, "sessions": sessions.frames}
        plain.close()
        sessions.close()
    anchor, measured = statistics.median(times["plain"]), statistics.median(times["sessions"])
    ratio = measured / anchor
    print(machine())
    print(f"prompts: {args.prompts} each (after {args.warmup} warm-up), one subagent call answered at once")
    print(
        f"without child sessions (anchor): {anchor * 1000:7.2f} ms median, "
        f"{frames['plain'] / total:5.1f} frames a prompt"
    )
    print(
        f"with child sessions:             {measured * 1000:7.2f} ms median, "
        f"{frames['sessions'] / total:5.1f} frames a prompt"
    )
    print(f"ratio: {ratio:.3f} (budget {BUDGET:.2f}: {'met' if ratio < BUDGET else 'NOT met'})")
    return 0 if ratio < BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
