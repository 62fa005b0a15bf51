"""Per-prompt overhead benchmark: the server's time for a prompt, outside the model, from turn 1 of
a thread to turn `--turns` (200), which must stay flat: turn 200 within 20% of turn 1.

One real server process (persistence on) with the benchmark model (`bench/benchmodel.py`), which
builds its chunks as they stream and never encodes the request. Each turn is what a coding
thread's turn looks like: the prompt, a model call that reads a file (`read_file`, a real tool
call), then an answer of `--reasoning` reasoning and `--text` text deltas. The client (this
process) sends each prompt and reads every frame until its answer; for each prompt it takes the
server's CPU time (all its threads, from `/proc`: what the server did, whatever else the machine
runs) and the wall clock from request to answer; the model's own time for the turn (it reports
it, call by call) is taken out of both. The CPU time is the gated figure. A warm-up thread of a few
turns on the same server comes first, so turn 1 pays no first-use cost (imports, schema builds).

The anchor is turn 1 of the same thread in the same run: the median of turns 1-20 against the
median of the last twenty, as a ratio. A real adapter's encoding of the request does grow with the
history (it sends all of it): it is reported apart, as the OpenAI-compatible adapter's
`chat_request` + `encode` of the same requests, rebuilt from the session log the server wrote.

    python bench/turns.py [--turns 200] [--window 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmodel import composition, machine, server_env

from acp_agent.llm.openai_wire import RequestOptions, chat_request, encode
from acp_agent.llm.request import LlmRequest, derive_messages
from acp_agent.session import CORE_EVENTS, default_registry

TARGET = 1.2
CORE_TYPES = {event.model_fields["type"].default for event in CORE_EVENTS}
NOTES = "".join(f"line {i}: some text the agent reads back\n" for i in range(1, 41))


class Client:
    """The editor's side of one server process: requests out, every frame parsed."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        frame = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.stdin.write(json.dumps(frame).encode() + b"\n")
        await self.stdin.drain()
        while True:
            line = await self.stdout.readline()
            if not line:
                raise RuntimeError(f"the server exited before answering {method}")
            answer = json.loads(line)
            if answer.get("id") == self.next_id and "method" not in answer:
                if "result" not in answer:
                    raise RuntimeError(f"{method}: {answer}")
                result: dict[str, Any] = answer["result"]
                return result

    def cpu_seconds(self) -> float:
        """The server's CPU time so far, all its threads (`/proc/<pid>/task/*/schedstat`, in ns)."""
        tasks = Path(f"/proc/{self.process.pid}/task")
        return sum(int((task / "schedstat").read_text().split()[0]) for task in tasks.iterdir()) / 1e9

    async def thread(self, cwd: Path, turns: int) -> tuple[str, list[float], list[float]]:
        """A new session and `turns` prompts in it: its id, each prompt's seconds from request to
        answer, and the server's CPU seconds for each."""
        session_id = (await self.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["sessionId"]
        seconds, cpu = [], []
        for turn in range(1, turns + 1):
            prompt = [{"type": "text", "text": f"Turn {turn}: read notes.txt and tell me what it says."}]
            start, start_cpu = time.perf_counter(), self.cpu_seconds()
            answer = await self.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
            seconds.append(time.perf_counter() - start)
            cpu.append(self.cpu_seconds() - start_cpu)
            if answer != {"stopReason": "end_turn"}:
                raise RuntimeError(f"turn {turn} answered {answer}")
        return session_id, seconds, cpu


def encoding_seconds(log: Path, turn: int, repeat: int = 20) -> float:
    """The OpenAI-compatible adapter's encoding of the last model request of `turn`, rebuilt from the
    log: the best of `repeat` (in seconds)."""
    registry = default_registry()  # the core types: all the model's messages come from
    lines = [json.loads(line) for line in log.read_bytes().splitlines()[1:]]
    events = [registry.parse(line) for line in lines if line["type"] in CORE_TYPES]
    starts = [i for i, event in enumerate(events) if event.type == "step/start" and event.data.turn == turn]
    request = LlmRequest(
        provider="bench",
        model="bench",
        system="You are a coding agent.",
        messages=derive_messages(events[: starts[-1]]),
        route="s2",
        session_id="bench",
    )
    options = RequestOptions(model="bench")
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        encode(chat_request(request, options))
        best = min(best, time.perf_counter() - start)
    return best


async def run(args: argparse.Namespace, tmp: Path) -> tuple[list[float], list[float], list[float], Path]:
    cwd = tmp / "work"
    cwd.mkdir()
    (cwd / "notes.txt").write_text(NOTES, encoding="utf-8")
    times = tmp / "model-times.txt"
    config = composition(
        tmp / "cordis.yml",
        text=args.text,
        reasoning=args.reasoning,
        tool="read_file",
        arguments={"path": "notes.txt"},
        times=str(times),
    )
    sessions = tmp / "sessions"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acp_agent", "--config", str(config),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=server_env(sessions), limit=1 << 24,
    )  # fmt: skip
    client = Client(process)
    await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    warm_turns = 5
    await client.thread(cwd, warm_turns)
    session_id, seconds, cpu = await client.thread(cwd, args.turns)
    process.stdin.close()  # type: ignore[union-attr]
    await process.wait()
    calls = [float(line) for line in times.read_text().split()][2 * warm_turns :]  # two calls a turn
    model = [calls[2 * i] + calls[2 * i + 1] for i in range(args.turns)]
    return seconds, cpu, model, sessions / session_id / "session.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--window", type=int, default=20, help="turns in each median")
    parser.add_argument("--text", type=int, default=40, help="text deltas per answer")
    parser.add_argument("--reasoning", type=int, default=20, help="reasoning deltas per answer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        seconds, cpu, model, log = asyncio.run(run(args, Path(tmp)))
        first, last = 1, args.turns
        encodings = {turn: encoding_seconds(log, turn) for turn in (first, last)}
        events = sum(1 for _ in log.open("rb")) - 1

    window = args.window

    def medians(values: list[float]) -> tuple[float, float]:
        return statistics.median(values[:window]), statistics.median(values[-window:])

    wall = medians([total - spent for total, spent in zip(seconds, model, strict=False)])
    busy = medians([total - spent for total, spent in zip(cpu, model, strict=False)])
    print(f"{machine()}; one thread of {args.turns} turns ({events:,} events")
    print(f"  logged), each a read_file call and an answer of {args.reasoning} reasoning + {args.text} text deltas;")
    print(f"  medians of {window} turns, the model's own time taken out")
    print(f"                                     turns 1-{window}   turns {last - window + 1}-{last}   ratio")
    ratio = busy[1] / busy[0]
    print(
        f"  server CPU time per prompt        {busy[0] * 1000:7.2f} ms   {busy[1] * 1000:7.2f} ms   "
        f"{ratio:5.2f}  (target <= {TARGET})"
    )
    print(
        f"  prompt to answer (wall clock)     {wall[0] * 1000:7.2f} ms   {wall[1] * 1000:7.2f} ms   "
        f"{wall[1] / wall[0]:5.2f}"
    )
    print(
        f"  the model's own time per turn     {statistics.median(model[:window]) * 1000:7.2f} ms   "
        f"{statistics.median(model[-window:]) * 1000:7.2f} ms"
    )
    print(f"  {'met' if ratio <= TARGET else 'MISSED'}: the server's time per prompt at turn {last} against turn 1")
    print("  apart: the OpenAI-compatible adapter's encoding of the turn's last request")
    for turn, spent in encodings.items():
        print(f"    turn {turn:3}: {spent * 1000:7.2f} ms")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
