"""Search benchmark: the `grep` tool through the real server against `rg` run directly, in one run.

A generated tree of 20,000 files (100 MB) is searched for a pattern with a few hundred matching
lines. The anchor is `rg` itself, run directly with the very arguments the tool gives it. The
server's time is a prompt whose scripted model calls `grep` once and then answers; the same prompt
on a one-file tree, measured apart, is the overhead of one tool call (the model steps, the log, the
wire). Printed: the tool's time less that overhead, as a ratio of rg's (the target: <= 1.3x), and
the pure-Python fallback's own ratio (the `search` row with `engine: python`).

    python bench/search.py [--runs 5] [--files 20000] [--kb 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acp_agent.tools.searchers import ripgrep_binary  # noqa: E402 - after the path is set

CONFIG = ROOT / "cordis.record.yml"
PATTERN = r"needle_[0-9]+"
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def make_tree(root: Path, files: int, kb: int) -> None:
    rng = random.Random(7)
    line = " ".join(WORDS) + "\n"
    body = (line * (kb * 1024 // len(line) + 1))[: kb * 1024]
    for n in range(files):
        directory = root / f"d{n // 200:03}"
        directory.mkdir(parents=True, exist_ok=True)
        text = body if n % 50 else body[:-40] + f"needle_{rng.randrange(10**6)}\n"
        (directory / f"f{n:05}.txt").write_text(text)


def time_rg(tree: Path, runs: int) -> float:
    binary = ripgrep_binary()
    assert binary is not None, "the ripgrep wheel is not installed"
    args = [
        str(binary),
        "--no-config",
        "--color=never",
        "--sort=path",
        "--null",
        "--no-heading",
        "--with-filename",
        "--line-number",
        "--context=0",
        "--regexp",
        PATTERN,
        "--",
        "./",
    ]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, cwd=tree, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def rpc(process: subprocess.Popen[bytes], request_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
    )
    process.stdin.flush()
    while True:
        frame = json.loads(process.stdout.readline())
        if frame.get("id") == request_id and "method" not in frame:
            return frame


def time_tool(cwd: Path, runs: int, work: Path, engine: str) -> float:
    """Median seconds of a prompt whose model calls grep once (with the `engine`) and answers."""
    call = {"toolCalls": [{"id": "call_grep", "name": "grep", "arguments": {"pattern": PATTERN, "head_limit": 100000}}]}
    script = work / f"script-{engine}.json"
    script.write_text(json.dumps([call, {"text": "found"}] * (runs + 1)))
    config = work / f"cordis-{engine}.yml"
    config.write_text(f"- include: {CONFIG}\n- id: search\n  config:\n    engine: {engine}\n")
    env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(work / "sessions")}
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_agent", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        rpc(process, 1, "initialize", {"protocolVersion": 1})
        session = rpc(process, 2, "session/new", {"cwd": str(cwd), "mcpServers": []})["result"]["sessionId"]  # type: ignore[index]
        times = []
        for n in range(runs + 1):  # the first warms the server up
            start = time.perf_counter()
            rpc(process, 10 + n, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "find"}]})
            times.append(time.perf_counter() - start)
        return statistics.median(times[1:])
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--kb", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        tree, tiny = work / "tree", work / "tiny"
        make_tree(tree, options.files, options.kb)
        make_tree(tiny, 1, 1)
        rg = time_rg(tree, options.runs)
        overhead = time_tool(tiny, options.runs, work, "auto")
        tool = time_tool(tree, options.runs, work, "auto")
        python = time_tool(tree, max(1, options.runs // 2), work, "python")
    size = options.files * options.kb / 1024
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load average {load}")
    print(f"tree: {options.files} files, {size:.0f} MB; pattern {PATTERN!r}")
    print(f"rg directly:               {rg * 1000:8.1f} ms")
    print(f"one grep call (tiny tree): {overhead * 1000:8.1f} ms  (the overhead of a tool call)")
    print(f"grep through the server:   {tool * 1000:8.1f} ms  -> {(tool - overhead) / rg:.2f}x rg (target <= 1.3x)")
    print(f"python fallback:           {python * 1000:8.1f} ms  -> {(python - overhead) / rg:.2f}x rg")


if __name__ == "__main__":
    main()
