"""What Linux's /proc says about processes: parents, groups, states, and the marker in an
environment. Elsewhere (no /proc) every answer is empty, and only process groups are ended."""

from __future__ import annotations

import os
import signal
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import NamedTuple

PROC = Path("/proc")
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
MARKER = "ACP_AGENT_PROCESS"
"""The environment variable every command starts with: `<server pid>.<n>`, the server and the
command group it belongs to. Descendants inherit it, so what a command leaves behind is found
again even when it left the group (`setsid`)."""


class ProcessInfo(NamedTuple):
    pid: int
    ppid: int
    pgid: int
    zombie: bool


def processes() -> list[ProcessInfo]:
    """Every process this user may see, as /proc has them now (gone ones are skipped)."""
    found = []
    for entry in PROC.glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:  # exited meanwhile, or not ours to read
            continue
        # `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses, so split after
        # its last closing parenthesis.
        fields = stat[stat.rindex(b")") + 2 :].split()
        found.append(ProcessInfo(int(entry.name), int(fields[1]), int(fields[2]), fields[0] == b"Z"))
    return found


EXEC_PATIENCE = 0.1
"""Seconds `marker_of` waits for a process in the middle of an exec to show its environment."""


def marker_of(pid: int, name: str) -> str | None:
    """The value of the environment variable `name` that process `pid` started with, if any.

    A process in the middle of an exec shows an empty environment (and command line) until the
    new program's are mapped, a few milliseconds: read once then, a command's leftover would pass
    for one without the marker and escape. So an empty environment is read again (a sleep of a
    millisecond between reads, `EXEC_PATIENCE` at most) until the command line shows the exec
    done; a process whose environment really is empty (`env -i`) has its command line, and costs
    one read more."""
    process = PROC / str(pid)
    deadline = time.monotonic() + EXEC_PATIENCE
    try:
        environ = (process / "environ").read_bytes()
        while not environ and time.monotonic() < deadline:
            if (process / "cmdline").read_bytes():  # the exec is done (or was never under way)
                environ = (process / "environ").read_bytes()
                break
            time.sleep(0.001)
            environ = (process / "environ").read_bytes()
    except OSError:
        return None
    prefix = name.encode() + b"="
    for item in environ.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode(errors="replace")
    return None


def set_child_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux), so what a command leaves
    behind stays below the server instead of going to init; False where that does not exist."""
    if sys.platform != "linux":
        return False  # pragma: no cover - the suite runs on Linux
    import ctypes  # here, not at the top: the watchdog imports this module and never needs it

    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def end_process(pid: int) -> None:
    """SIGKILL a process; one that is gone already (or no longer ours) is no error."""
    with suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def end_group(pgid: int) -> None:
    """SIGKILL a process group; an empty one is no error."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
