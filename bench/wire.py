"""Wire benchmark: a model's deltas streamed end to end, from the model through the real server
process (session log written, persistence on) to a client that parses every frame.

One prompt whose answer is `--deltas` text deltas (one word each), generated as they stream by
the benchmark model (`bench/benchmodel.py`, which holds no script: what the server's memory holds
is the server's own). The client (this
process) sends `initialize`, `session/new`, then `session/prompt`, and times from the prompt until
its answer, reading stdout line by line and parsing every frame with `json.loads`. Measured
against two anchors on the same pipe, with the same client, in the same run:

- `raw`: a bare Python writer that answers the same three requests and writes the same
  `session/update` frames (`json.dumps` each, one buffered stdout): the floor of any Python agent;
- `sdk`: an agent built on the official ACP SDK (`agent-client-protocol`), whose prompt sends the
  same updates through `conn.session_update`.

The three alternate, and the median of `--runs` of each is printed, with the ratios of deltas per
second (the server's rate over each anchor's), each process's peak RSS (`VmHWM`, read once the
prompt is answered) and the machine. Targets: >= 0.5x the raw writer, >= 1.5x the SDK agent, the
server's peak RSS <= 100 MB.

    python bench/wire.py [--deltas 100000] [--runs 3] [--per-checkpoint 1]
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

from benchmodel import composition, machine, server_env, word
from client import peak_rss_mb

TARGETS = {"raw": 0.5, "sdk": 1.5}
RSS_TARGET_MB = 100


def words(count: int) -> list[str]:
    """`count` deltas of one word and its space, as the benchmark model streams them."""
    return [word(i) for i in range(count)]


def update(session_id: str, text: str) -> dict[str, Any]:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": chunk}}


# -- the anchors, run as `python bench/wire.py --produce raw|sdk --deltas N` -----------------------


def produce_raw(deltas: int) -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = json.loads(line)
        method, request_id = request["method"], request["id"]
        if method == "session/new":
            result: dict[str, Any] = {"sessionId": "bench"}
        elif method == "session/prompt":
            for text in words(deltas):
                out.write(json.dumps(update("bench", text)).encode() + b"\n")
            result = {"stopReason": "end_turn"}
        else:
            result = {"protocolVersion": 1}
        out.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n")
        out.flush()


def produce_sdk(deltas: int) -> None:
    import acp
    from acp.schema import AgentMessageChunk, InitializeResponse, NewSessionResponse, PromptResponse, TextContentBlock

    class BenchAgent:
        conn: Any

        def on_connect(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
            return InitializeResponse(protocol_version=protocol_version)

        async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
            return NewSessionResponse(session_id="bench")

        async def prompt(self, prompt: Any, session_id: str, **kwargs: Any) -> PromptResponse:
            for text in words(deltas):
                chunk = AgentMessageChunk(
                    session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
                )
                await self.conn.session_update(session_id=session_id, update=chunk)
            return PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.run_agent(BenchAgent()))  # type: ignore[arg-type]  # a structural Agent


# -- the client ------------------------------------------------------------------------------------


async def time_prompt(command: list[str], env: dict[str, str], cwd: str, deltas: int) -> tuple[float, float]:
    """Seconds from sending the prompt until its answer (every frame before it is parsed), and
    the producer's peak RSS in MB."""
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, limit=1 << 26
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def request(request_id: int, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
        stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
        )
        await stdin.drain()
        chunks = 0
        while True:
            line = await stdout.readline()
            if not line:
                raise RuntimeError(f"{command[-3:]} exited before answering {method}")
            frame = json.loads(line)
            if frame.get("id") == request_id and "method" not in frame:
                return frame, chunks
            chunks += frame.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"

    await request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    new, _ = await request(2, "session/new", {"cwd": cwd, "mcpServers": []})
    session_id = new["result"]["sessionId"]
    start = time.perf_counter()
    answer, chunks = await request(
        3, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "Go."}]}
    )
    elapsed = time.perf_counter() - start
    if answer.get("result") != {"stopReason": "end_turn"} or chunks != deltas:
        raise RuntimeError(f"{command[-3:]}: answered {answer} after {chunks} of {deltas} chunks")
    rss = peak_rss_mb(process.pid)
    stdin.close()
    await process.wait()
    return elapsed, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--per-checkpoint", type=int, default=1, help="model chunks per pass through the event loop")
    parser.add_argument("--produce", choices=("raw", "sdk"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.produce is not None:
        (produce_raw if args.produce == "raw" else produce_sdk)(args.deltas)
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        config = composition(Path(tmp) / "cordis.yml", text=args.deltas, per_checkpoint=args.per_checkpoint)
        env = server_env(Path(tmp) / "sessions")
        me = [sys.executable, str(Path(__file__).resolve()), "--deltas", str(args.deltas), "--produce"]
        commands: dict[str, list[str]] = {
            "server": [sys.executable, "-m", "acp_agent", "--config", str(config)],
            "raw": [*me, "raw"],
            "sdk": [*me, "sdk"],
        }
        timings: dict[str, list[float]] = {name: [] for name in commands}
        peaks: dict[str, list[float]] = {name: [] for name in commands}

        def once(name: str) -> tuple[float, float]:
            return asyncio.run(time_prompt(commands[name], env, tmp, args.deltas))

        for name in commands:
            once(name)  # warm up: file cache, bytecode
        for _ in range(args.runs):
            for name in commands:
                seconds, rss = once(name)
                timings[name].append(seconds)
                peaks[name].append(rss)
        logs = list((Path(tmp) / "sessions").glob("*/session.jsonl"))
        logged = sum(1 for path in logs if path.read_bytes().count(b'"text-delta"') == args.deltas)

    print(f"{machine()}; {args.deltas:,} deltas, median of {args.runs} runs")
    print(f"session logs written by the server runs, each with every delta: {logged} of {len(logs)}")
    rates = {name: args.deltas / statistics.median(seconds) for name, seconds in timings.items()}
    labels = {
        "server": "acp-agent server (persistence on)",
        "raw": "raw Python writer (floor)",
        "sdk": "official ACP SDK agent",
    }
    for name, rate in rates.items():
        print(
            f"  {labels[name]:36} {rate:10,.0f} deltas/s  ({statistics.median(timings[name]) * 1000:7.1f} ms)"
            f"  peak RSS {max(peaks[name]):6.1f} MB"
        )
    ok = True
    for anchor, target in TARGETS.items():
        ratio = rates["server"] / rates[anchor]
        ok &= ratio >= target
        print(f"  ratio server / {labels[anchor]:27} {ratio:6.2f}  (target >= {target})")
    rss = max(peaks["server"])
    ok &= rss <= RSS_TARGET_MB
    print(f"  server peak RSS {rss:.1f} MB (target <= {RSS_TARGET_MB} MB)")
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
