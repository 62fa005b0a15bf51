"""Shutdown benchmark: how long the server takes from a shutdown signal (or stdin's end) to its
exit, mid-turn: a prompt is streaming (the scripted model hangs after its first text) and a command
left a background process running, so the path cancels the turn, answers the prompt, closes the
log and ends the process. Beside it, the floor: a bare Python process blocked on stdin, ended by
the same signal (or stdin's end).

    python bench/shutdown.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "cordis.record.yml"
FLOOR = "import sys\nsys.stdin.buffer.read()\n"
BASH = {"id": "call_bg", "name": "bash", "arguments": {"command": "sleep 300 > /dev/null 2>&1 &"}}
STOPS = ("SIGTERM", "SIGINT", "SIGHUP", "EOF")


def request(request_id: int, method: str, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"


def stop(process: subprocess.Popen[bytes], how: str) -> float:
    """Seconds from the signal (or closing stdin) until the process exited with 0."""
    assert process.stdin is not None
    start = time.perf_counter()
    if how == "EOF":
        process.stdin.close()
    else:
        process.send_signal(signal.Signals[how])
    code = process.wait()
    elapsed = time.perf_counter() - start
    if code not in (0, -signal.Signals[how] if how != "EOF" else 0):
        raise RuntimeError(f"exited {code} after {how}")
    return elapsed


def time_server(env: dict[str, str], cwd: str, how: str) -> float:
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_agent", "--config", str(CONFIG)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(
        request(1, "initialize", {"protocolVersion": 1}) + request(2, "session/new", {"cwd": cwd, "mcpServers": []})
    )
    process.stdin.flush()
    session_id = None
    while session_id is None:
        frame = json.loads(process.stdout.readline())
        session_id = frame.get("result", {}).get("sessionId") if frame.get("id") == 2 else None
    process.stdin.write(
        request(3, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "Go."}]})
    )
    process.stdin.flush()
    while b'"text":"partial"' not in process.stdout.readline():  # the turn streams, then hangs
        pass
    elapsed = stop(process, how)
    if b'"stopReason":"cancelled"' not in process.stdout.read():
        raise RuntimeError(f"the prompt was not answered cancelled after {how}")
    return elapsed


def time_floor(how: str) -> float:
    process = subprocess.Popen([sys.executable, "-c", FLOOR], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(0.2)  # let it reach its read: what is timed is the signal's path, not start-up
    return stop(process, how)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps([{"toolCalls": [BASH]}, {"hang": True}] * (len(STOPS) * (args.runs + 1))))
        env = {**os.environ, "ACP_AGENT_SCRIPT": str(script), "ACP_AGENT_SESSIONS": str(Path(tmp) / "sessions")}
        server: dict[str, list[float]] = {how: [] for how in STOPS}
        floor: dict[str, list[float]] = {how: [] for how in STOPS}
        for run in range(args.runs + 1):  # the first round warms the caches and is not counted
            for how in STOPS:
                s, f = time_server(env, tmp, how), time_floor(how)
                if run:
                    server[how].append(s)
                    floor[how].append(f)
    print(f"nproc {os.cpu_count()}, Python {sys.version.split()[0]}; mid-turn shutdown, median of {args.runs} runs")
    print(f"  {'stop':8} {'server ms':>10} {'floor ms':>10} {'ratio':>8}")
    for how in STOPS:
        s, f = statistics.median(server[how]) * 1000, statistics.median(floor[how]) * 1000
        print(f"  {how:8} {s:10.1f} {f:10.1f} {s / f:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
