"""Load benchmark: `session/load` of a long stored session, beside a bare parse of the same log.

For each size (`--events`, default 1k, 10k and 100k events), `bench/long_session.py` writes a
session of whole turns (~20 reasoning and ~40 text deltas a turn, a tool call with its result).
Then, alternating, `--runs` times each:

- `floor`: a fresh Python process that reads the log and `json.loads` every line (the least any
  Python agent can do to read it back), timed inside that process;
- `server`: the real server (packaged config, scripted model, persistence on) is spawned and
  initialized; timed from sending `session/load` until its answer, with this process reading and
  parsing (`json.loads`) every replayed frame. Its peak RSS (`VmHWM`) is read before it exits.

Printed: the medians, the ratio server/floor and the peak RSS (targets for the largest size:
<= 3x, <= 100 MB; a small log's load is mostly the request's fixed cost), the time each size's
load takes per thousand lines more than the size before it (the fixed cost left out; linear: the
last step's within 1.2x of the earlier ones'; the floor's own growth is printed beside it, for
context: on some machines a bare parse grows faster than linearly too), and the machine.

    python bench/load.py [--events 1000 10000 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmodel import machine
from client import Spawned
from long_session import write_session

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "cordis.record.yml"
FLOOR = """
import json, sys, time
start = time.perf_counter()
with open(sys.argv[1], "rb") as file:
    parsed = [json.loads(line) for line in file]
print(time.perf_counter() - start)
"""
RATIO_TARGET = 3.0
RSS_TARGET_MB = 100
LINEAR_TARGET = 1.2


def floor_once(path: Path) -> float:
    out = subprocess.run([sys.executable, "-c", FLOOR, str(path)], check=True, capture_output=True, text=True)
    return float(out.stdout)


def server_once(env: dict[str, str], session_id: str, cwd: str) -> tuple[float, float, int]:
    """Seconds from `session/load` to its answer, the server's peak RSS (MB), frames replayed."""
    server = Spawned([sys.executable, "-m", "acp_agent", "--config", str(CONFIG)], env)
    try:
        server.request("initialize", {"protocolVersion": 1})
        server.request("session/load", {"sessionId": session_id, "cwd": cwd, "mcpServers": []})
        return server.seconds, server.peak_rss_mb(), server.frames
    finally:
        server.close()


def per_thousand(points: list[tuple[int, float]]) -> list[float]:
    """Each size's time per thousand lines more than the size before it, in ms, from its (lines,
    seconds): the fixed cost of a request, the same at every size, left out."""
    return [
        (after - before) / (lines - fewer) * 1000 * 1000
        for (fewer, before), (lines, after) in zip(points, points[1:], strict=False)
    ]


def growth_of(slopes: list[float]) -> float:
    """The last step's time per line against the cheapest earlier step's (1.0: linear)."""
    return slopes[-1] / min(slopes[:-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if len(args.events) < 3:
        parser.error("--events needs three sizes or more: linearity compares the time each adds")
    print(f"{machine()}; median of {args.runs} runs")
    print(
        f"{'events':>8} {'lines':>8} {'floor ms':>9} {'load ms':>9} "
        f"{'ratio':>6} {'peak MB':>8} {'frames':>7} {'ms/1k more':>10}"
    )
    floors_at: list[tuple[int, float]] = []  # (lines, seconds) of each size: the floor's
    loads_at: list[tuple[int, float]] = []  # and the server's load
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "work"
        cwd.mkdir()
        sessions = Path(tmp) / "sessions"
        env = {**os.environ, "ACP_AGENT_SESSIONS": str(sessions), "ACP_AGENT_SCRIPT": str(Path(tmp) / "script.json")}
        (Path(tmp) / "script.json").write_text("[]", encoding="utf-8")
        for size in args.events:
            session_id = write_session(sessions, size, str(cwd))
            path = sessions / session_id / "session.jsonl"
            lines = sum(1 for _ in path.open("rb"))
            floors, loads, peaks = [], [], []
            frames = 0
            for _ in range(args.runs):
                floors.append(floor_once(path))
                elapsed, rss, frames = server_once(env, session_id, str(cwd))
                loads.append(elapsed)
                peaks.append(rss)
            floor, load = statistics.median(floors), statistics.median(loads)
            ratio, peak = load / floor, max(peaks)
            floors_at.append((lines, floor))
            loads_at.append((lines, load))
            largest = (ratio, peak)
            slope = f"{per_thousand(loads_at)[-1]:>10.2f}" if len(loads_at) > 1 else f"{'-':>10}"
            print(
                f"{lines - 1:>8,} {lines:>8,} {floor * 1000:>9.1f} {load * 1000:>9.1f} {ratio:>5.2f}x"
                f" {peak:>8.1f} {frames:>7,} {slope}"
            )
    growth, floor_growth = growth_of(per_thousand(loads_at)), growth_of(per_thousand(floors_at))
    met = largest[0] <= RATIO_TARGET and largest[1] <= RSS_TARGET_MB and growth <= LINEAR_TARGET
    print(f"targets: load <= {RATIO_TARGET}x floor, peak RSS <= {RSS_TARGET_MB} MB (the largest load's),")
    print(
        f"         time per event added, up to the largest size, within {LINEAR_TARGET}x of that "
        f"up to the smaller ones (now {growth:.2f}x;"
    )
    print(f"         the floor's own, for context: {floor_growth:.2f}x)")
    print("all targets met" if met else "TARGET MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
