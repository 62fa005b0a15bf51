"""List benchmark: `session/list` over a big store, and a small `session/load` beside it.

Writes a store of `--sessions` (5,000) stored sessions, one prompted turn each, a tenth of them
in one working directory (the others spread over nine), plus one small session; then two
anchor stores: the matching tenth alone, and the small session alone. Each store's index is
built once (a first listing) before anything is timed, as it is once a store has been used.
Then, alternating, `--runs` times each, every figure in a freshly spawned server (packaged
config, scripted model), timed from the request to its answer:

- `list`: `session/list` over the whole store (target <= 60 ms), and a second one in the same
  process;
- `list cwd`: `session/list {cwd}` over the whole store, beside the same request over the store
  that holds only the matching sessions (target: within 2x);
- `load`: `session/load` of the small session beside all the others, beside the same load in
  the store that holds it alone (target: no growth, within 1.2x for the machine's noise);
- `new`: `session/new` beside all the others, beside the same in the store of the small session
  (no target; measured last, since each adds a session directory).

    python bench/list.py [--sessions 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmodel import machine
from client import Spawned

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "cordis.record.yml"
LIST_TARGET_MS = 60
CWD_TARGET = 2.0
LOAD_TARGET = 1.2


def write_log(root: Path, session_id: str, cwd: str, created_at: int, prompt: str) -> None:
    """A stored session as the server writes one: a prompt and a one-step answer."""
    header = {"type": "session", "version": 0, "id": session_id, "createdAt": created_at, "cwd": cwd, "route": "s1"}
    t = created_at
    turn = {"turn": 1, "step": 1}
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}},
        {"type": "user/message", "data": {"content": [{"type": "text", "text": prompt}], "source": {"kind": "user"}}},
        {"type": "step/start", "data": turn},
        {"type": "assistant/chunk", "data": {**turn, "chunk": {"type": "text-delta", "index": 0, "text": "Done."}}},
        {"type": "assistant/chunk", "data": {**turn, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}},
        {"type": "assistant/message", "data": {**turn, "content": [{"type": "text", "text": "Done."}]}},
        {"type": "step/end", "data": turn},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    lines = [json.dumps(header)]
    for seq, event in enumerate(events):
        t += 1
        lines.append(json.dumps({"type": event["type"], "seq": seq, "time": t, "data": event["data"]}))
    directory = root / session_id
    directory.mkdir(parents=True, mode=0o700)
    (directory / "session.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (directory / "children").write_text("", encoding="utf-8")  # a new session's, as the store makes it


def serve(sessions: Path, script: Path) -> Spawned:
    """A server spawned on one store, initialized."""
    env = {**os.environ, "ACP_AGENT_SESSIONS": str(sessions), "ACP_AGENT_SCRIPT": str(script)}
    server = Spawned([sys.executable, "-m", "acp_agent", "--config", str(CONFIG)], env)
    server.request("initialize", {"protocolVersion": 1})
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        script = base / "script.json"
        script.write_text("[]", encoding="utf-8")
        cwds = [str(base / f"work{n}") for n in range(10)]
        for cwd in cwds:
            os.mkdir(cwd)
        big, matching, alone = base / "big", base / "matching", base / "alone"
        for n in range(args.sessions):
            write_log(
                big, str(uuid.uuid4()), cwds[n % 10], 1_700_000_000_000 + n * 1000, f"Task number {n}: fix the tests"
            )
        for directory in big.iterdir():
            if json.loads((directory / "session.jsonl").open().readline())["cwd"] == cwds[0]:
                shutil.copytree(directory, matching / directory.name)
        small = str(uuid.uuid4())
        write_log(alone, small, cwds[0], 1_600_000_000_000, "A small session")
        shutil.copytree(alone / small, big / small)
        time.sleep(2)  # a store in use last had a session directory made seconds ago, or more: the
        # index records the root's time only once it is too old to hide a later change (session/index.py)
        for store in (big, matching, alone):  # the index, built once, as in a store in use
            server = serve(store, script)
            server.request("session/list", {})
            server.close()

        def list_all() -> tuple[float, float]:
            server = serve(big, script)
            server.request("session/list", {})
            first = server.seconds
            server.request("session/list", {})
            server.close()
            return first, server.seconds

        def list_cwd(store: Path) -> float:
            server = serve(store, script)
            assert len(server.request("session/list", {"cwd": cwds[0]})["sessions"]) > 0
            server.close()
            return server.seconds

        def load(store: Path) -> float:
            server = serve(store, script)
            server.request("session/load", {"sessionId": small, "cwd": cwds[0], "mcpServers": []})
            server.close()
            return server.seconds

        figures: dict[str, list[float]] = {}
        for _ in range(args.runs):
            first, second = list_all()
            for name, value in (
                ("list", first),
                ("list again", second),
                ("list cwd", list_cwd(big)),
                ("list cwd, matching alone", list_cwd(matching)),
                ("load", load(big)),
                ("load, alone", load(alone)),
            ):
                figures.setdefault(name, []).append(value * 1000)

        def new(store: Path) -> float:
            server = serve(store, script)
            server.request("session/new", {"cwd": cwds[0], "mcpServers": []})
            server.close()
            return server.seconds

        for _ in range(args.runs):  # last: each adds a session directory, which the next listing would list
            figures.setdefault("new", []).append(new(big) * 1000)
            figures.setdefault("new, alone", []).append(new(alone) * 1000)
    median = {name: statistics.median(values) for name, values in figures.items()}
    cwd_ratio = median["list cwd"] / median["list cwd, matching alone"]
    load_ratio = median["load"] / median["load, alone"]
    new_ratio = median["new"] / median["new, alone"]
    print(f"{machine()}; {args.sessions:,} stored sessions, median of {args.runs} runs (ms)")
    for name, value in median.items():
        print(f"  {name:<26} {value:8.1f}")
    print(f"list over {args.sessions:,}:  {median['list']:.1f} ms (target <= {LIST_TARGET_MS} ms)")
    print(f"list with a cwd:  {cwd_ratio:.2f}x the store of the matching sessions alone (target <= {CWD_TARGET}x)")
    print(f"small load:       {load_ratio:.2f}x the store that holds it alone (target <= {LOAD_TARGET}x)")
    print(
        f"new session:      {new_ratio:.2f}x in the store that holds one "
        "(no target: it records its entry, lists nothing)"
    )
    met = median["list"] <= LIST_TARGET_MS and cwd_ratio <= CWD_TARGET and load_ratio <= LOAD_TARGET
    print("all targets met" if met else "TARGET MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
