"""Soak benchmark: the server's memory over `--sessions` (200) sessions of one prompt each, and once
they are closed: it must come back to within 10% of where it started after `session/close`.

One real server process (persistence on) with the benchmark model (`bench/benchmodel.py`), each
prompt answered with a `read_file` call and `--text` text deltas. The resident set (`VmRSS`) is read
from `/proc` at the start (after `initialize` and one warm-up session, opened, prompted and
closed, so what is loaded once for the first session is not counted as a session's), with all
the sessions open, and after closing them all; then once more for a second round of as many
sessions (memory the first round gave back to the interpreter is used again: RSS stays flat). The
anchor is the start, in the same process: the ratio is to it.

    python bench/soak.py [--sessions 200] [--text 40]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmodel import composition, machine, server_env
from client import status_kb
from turns import NOTES, Client

TARGET = 1.10


def rss_kb(pid: int) -> int:
    return status_kb(pid, "VmRSS")


async def soak(args: argparse.Namespace, tmp: Path) -> tuple[int, list[tuple[int, int]]]:
    cwd = tmp / "work"
    cwd.mkdir()
    (cwd / "notes.txt").write_text(NOTES, encoding="utf-8")
    config = composition(tmp / "cordis.yml", text=args.text, tool="read_file", arguments={"path": "notes.txt"})
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acp_agent", "--config", str(config),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=server_env(tmp / "sessions"), limit=1 << 24,
    )  # fmt: skip
    client = Client(process)
    await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    warm, *_ = await client.thread(cwd, 1)
    await client.request("session/close", {"sessionId": warm})
    start = rss_kb(process.pid)
    rounds = []
    for _ in range(2):  # the second round shows whether closed sessions' memory is used again
        opened = [(await client.thread(cwd, 1))[0] for _ in range(args.sessions)]
        full = rss_kb(process.pid)
        for session_id in opened:
            await client.request("session/close", {"sessionId": session_id})
        rounds.append((full, rss_kb(process.pid)))
    process.stdin.close()  # type: ignore[union-attr]
    await process.wait()
    return start, rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--text", type=int, default=40, help="text deltas per answer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        start, rounds = asyncio.run(soak(args, Path(tmp)))
    (full, closed), (again, closed_again) = rounds
    print(f"{machine()}; {args.sessions} sessions of one prompt each")
    print(f"  server RSS at the start:            {start / 1024:7.1f} MB")
    print(
        f"  with the {args.sessions} sessions open:        {full / 1024:7.1f} MB  "
        f"(+{(full - start) / args.sessions:.1f} KB a session)"
    )
    print(f"  after closing them all:             {closed / 1024:7.1f} MB")
    print(f"  {args.sessions} more, open / closed:           {again / 1024:7.1f} / {closed_again / 1024:.1f} MB")
    ratio = closed / start
    print(f"  ratio after close / start: {ratio:.3f} (target <= {TARGET}); {'met' if ratio <= TARGET else 'MISSED'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
