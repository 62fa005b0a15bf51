"""The watchdog: `python -m acp_agent.processes.watchdog <marker prefix>`.

Started by the server (`registry.Watchdog`) in a session of its own, it reads lines from its
stdin: `+g <pgid>` / `-g <pgid>` (a command group), `+p <pid>` / `-p <pid>` (a process). When
stdin ends (the server closed it, or the server died, however), it SIGKILLs every group and
process it still holds and every process whose environment carries the server's marker prefix,
then exits. It never outlives that moment.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterable

from acp_agent.processes import proc
from acp_agent.processes.proc import MARKER

SWEEPS = 3
"""Passes over /proc at the end: a process forked while the first pass ran is found by the next."""


def watch(lines: Iterable[bytes], prefix: str) -> None:
    """Follow the server's registry until `lines` end, then end what it held."""
    groups: set[int] = set()
    pids: set[int] = set()
    for line in lines:
        op, _, value = line.decode().strip().partition(" ")
        if not value.isdigit():
            continue  # not a line of ours; nothing to do with it
        target = groups if op[1:] == "g" else pids
        if op[0] == "+":
            target.add(int(value))
        else:
            target.discard(int(value))
    end(groups, pids, prefix)


def end(groups: set[int], pids: set[int], prefix: str) -> None:
    for group in groups:
        proc.end_group(group)
    for pid in pids:
        proc.end_process(pid)
    for _ in range(SWEEPS):
        marked = [
            info.pid
            for info in proc.processes()
            if not info.zombie and (proc.marker_of(info.pid, MARKER) or "").startswith(prefix)
        ]
        if not marked:
            return
        for pid in marked:
            proc.end_process(pid)


def main() -> int:
    # The terminal's signals are for the server; the watchdog ends when its pipe does.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    watch(sys.stdin.buffer, sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
