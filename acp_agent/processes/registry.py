"""`ProcessRegistry`: every process the server started or inherited, ended when its owner goes."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from contextlib import suppress
from typing import Final

from acp_agent.kernel.context import ServiceKey
from acp_agent.kernel.scope import Scope
from acp_agent.processes import proc
from acp_agent.processes.proc import MARKER

__all__ = ["MARKER", "PROCESSES", "CommandGroup", "ProcessRegistry", "Watchdog"]

log = logging.getLogger(__name__)

_WATCHDOG_STOP_SECONDS = 2.0


class CommandGroup:
    """One command's process group and everything carrying its marker; ended together."""

    def __init__(self, registry: ProcessRegistry, token: str) -> None:
        self._registry = registry
        self.token = token
        self.pgid: int | None = None

    @property
    def env(self) -> dict[str, str]:
        """What the command's environment must hold for its leftovers to be found."""
        return {MARKER: self.token}

    def started(self, pid: int) -> None:
        """The command's leader (its own session: the group id is its pid) is running."""
        self.pgid = pid
        self._registry._started(self)

    def exited(self) -> None:
        """The leader was reaped: what it left behind and was orphaned is adopted now."""
        self._registry._exited(self)


class ProcessRegistry:
    """What the server must end: command groups (a tool's command, a stdio MCP server), with what
    they leave behind, found by their marker or adopted when it is orphaned to the server as a
    child subreaper.

    `group(owner)` makes a command group that ends with `owner` (an agent's scope: its session);
    `close()` ends everything (the server exits). A `Watchdog` is told of every group and process
    as the registry learns of it, and ends them if the server dies without closing the registry.
    With `watchdog=True` it is started by the first `group` (before its command is spawned): a
    session that never runs a command costs no watchdog, and start-up does not wait for one.
    """

    def __init__(self, *, watchdog: bool = False) -> None:
        self.prefix = f"{os.getpid()}."
        self._wants_watchdog = watchdog
        self._watchdog: Watchdog | None = None
        self._count = 0
        self._groups: dict[str, CommandGroup] = {}
        self._owned: dict[int, list[CommandGroup]] = {}
        """Groups by the id of the scope that owns them."""
        self._direct: set[int] = set()
        """Children of ours someone else reaps: group leaders, the watchdog."""
        self._processes: set[int] = set()
        """Adopted orphans: ended at `close`."""

    @classmethod
    def for_this_process(cls) -> ProcessRegistry:
        """The server's registry: on Linux it becomes a child subreaper and has a watchdog."""
        if not proc.set_child_subreaper():
            return cls()  # pragma: no cover - no subreaper, no /proc: groups are still ended
        return cls(watchdog=True)

    # -- what others register --------------------------------------------------------------------

    def group(self, owner: Scope) -> CommandGroup:
        """A new command group, ended (if anything of it is left) when `owner` is disposed."""
        self._watch()
        self._count += 1
        group = CommandGroup(self, f"{self.prefix}{self._count}")
        owned = self._owned.get(id(owner))
        if owned is None:
            owned = self._owned[id(owner)] = []
            owner.add(lambda: self._end(self._owned.pop(id(owner), [])))
        owned.append(group)
        return group

    # -- what the registry finds -----------------------------------------------------------------

    def adopt(self) -> None:
        """Look at this process's children: orphans reparented to it (it is a subreaper) are
        registered; those that exited are reaped; groups with nothing left alive are forgotten."""
        seen = proc.processes()
        me = os.getpid()
        alive = {info.pgid for info in seen if not info.zombie}
        for group in list(self._groups.values()):
            if group.pgid not in alive:
                self._forget(group)
        for info in seen:
            if info.ppid != me or info.pid in self._direct:
                continue
            if info.zombie:
                with suppress(ChildProcessError):
                    os.waitpid(info.pid, os.WNOHANG)
                if info.pid in self._processes:
                    self._processes.discard(info.pid)
                    self._tell(f"-p {info.pid}")
            elif info.pid not in self._processes:
                self._processes.add(info.pid)
                self._tell(f"+p {info.pid}")

    def close(self) -> None:
        """End everything: every group, every process carrying this server's marker, every
        adopted process; then let the watchdog go."""
        self.adopt()
        self._end(list(self._groups.values()), everything=True)
        for pid in self._processes:
            proc.end_process(pid)
        self._processes.clear()
        if self._watchdog is not None:
            self._watchdog.stop()

    # -- internals -------------------------------------------------------------------------------

    def _started(self, group: CommandGroup) -> None:
        assert group.pgid is not None
        self._groups[group.token] = group
        self._direct.add(group.pgid)
        self._tell(f"+g {group.pgid}")

    def _exited(self, group: CommandGroup) -> None:
        assert group.pgid is not None
        self._direct.discard(group.pgid)  # reaped by its starter: no child of ours any more
        self.adopt()

    def _forget(self, group: CommandGroup) -> None:
        # The leader stays in `_direct` until `exited`: its reaper is the one that started it.
        if self._groups.pop(group.token, None) is not None:
            self._tell(f"-g {group.pgid}")

    def _end(self, groups: list[CommandGroup], *, everything: bool = False) -> None:
        tokens = {group.token for group in groups}
        for group in groups:
            if group.pgid is not None and group.token in self._groups:
                proc.end_group(group.pgid)
        if tokens or everything:
            for info in proc.processes():
                marker = None if info.zombie else proc.marker_of(info.pid, MARKER)
                if marker is not None and (marker in tokens or (everything and marker.startswith(self.prefix))):
                    proc.end_process(info.pid)
        for group in groups:
            self._forget(group)

    def _watch(self) -> None:
        if self._wants_watchdog and self._watchdog is None:
            self._watchdog = Watchdog.start(self.prefix)
            self._direct.add(self._watchdog.pid)

    def _tell(self, line: str) -> None:
        if self._watchdog is not None:
            self._watchdog.tell(line)


class Watchdog:
    """The server's side of `python -m acp_agent.processes.watchdog`: a small process in a session
    of its own that hears of every group and process the registry holds, through a pipe, and ends
    them all when the pipe closes (the server closed it, or died, kill -9 included)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        assert process.stdin is not None
        self._pipe = process.stdin.fileno()
        self.pid = process.pid

    @classmethod
    def start(cls, prefix: str) -> Watchdog:
        process = subprocess.Popen(
            [sys.executable, "-m", "acp_agent.processes.watchdog", prefix],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # not ended by a signal to the server's group
        )
        return cls(process)

    def tell(self, line: str) -> None:
        try:
            os.write(self._pipe, line.encode() + b"\n")  # a line is far below PIPE_BUF: atomic
        except OSError:  # pragma: no cover - the watchdog died; the server still ends what it can
            log.warning("the process watchdog is gone: a kill -9 of the server may leave processes behind")

    def stop(self) -> None:
        """Close the pipe (the watchdog ends what is left, which is nothing now) and reap it."""
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(_WATCHDOG_STOP_SECONDS)
        except subprocess.TimeoutExpired:  # pragma: no cover - it only sweeps /proc, then exits
            self._process.kill()
            self._process.wait()  # reaped: gone, not a zombie, when this returns


PROCESSES: Final = ServiceKey[ProcessRegistry]("processes")
"""`ctx.get(PROCESSES)`: the server's process registry (provided by the stdio server)."""
