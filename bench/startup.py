"""Start-up benchmark: spawn the server, send `initialize` and `session/new` together (as editors
do), and time until both are answered (packaged config, no API key needed). Printed beside the floor: a bare Python script that answers
each line, the least any Python agent can take.

    python bench/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
BUDGET = 12


def handshake(cwd: str) -> bytes:
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}},
    ]
    return b"".join(json.dumps(frame).encode() + b"\n" for frame in frames)


def time_once(command: list[str], env: dict[str, str], payload: bytes) -> float:
    """Seconds from spawn until two response lines came back."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert process.stdin and process.stdout
    process.stdin.write(payload)
    process.stdin.flush()
    answered = 0
    while answered < 2:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{command} exited before answering")
        answered += b'"id"' in line
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait()
    return elapsed


def median_ms(command: list[str], env: dict[str, str], payload: bytes, runs: int) -> float:
    time_once(command, env, payload)  # warm the file cache
    return statistics.median(time_once(command, env, payload) for _ in range(runs)) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # An installed package has its bytecode compiled by pip; an editable checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise recompile every module at every start.
    compileall.compile_dir(ROOT / "acp_agent", quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "floor.py"
        script.write_text(FLOOR)
        env = {**os.environ, "ACP_AGENT_SESSIONS": str(Path(tmp) / "sessions")}
        payload = handshake(tmp)
        floor = median_ms([sys.executable, str(script)], env, payload, args.runs)
        agent = median_ms([sys.executable, "-m", "acp_agent"], env, payload, args.runs)
    print(f"runs per command:           {args.runs}")
    print(f"floor (bare Python echo):   {floor:7.1f} ms median")
    print(f"acp-agent to a session:     {agent:7.1f} ms median")
    print(f"ratio:                      {agent / floor:7.1f}x (budget {BUDGET}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
