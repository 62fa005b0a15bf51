"""The process registry and the watchdog with real processes (the test process is no subreaper, so
orphans go elsewhere and are found by their marker)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from acp_agent.kernel.scope import Scope
from acp_agent.processes.proc import MARKER, marker_of, processes
from acp_agent.processes.registry import ProcessRegistry, Watchdog
from acp_agent.processes.watchdog import watch
from acp_agent.tools.bash import run_command

pytestmark = pytest.mark.anyio

LEAVE_BEHIND = "sleep 300 > /dev/null 2>&1 & echo $!; setsid sleep 300 > /dev/null 2>&1 & echo $!"
DEADLINE = 10.0


def state(pid: int) -> str | None:
    """The process's state letter; None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def alive(pid: int) -> bool:
    return state(pid) not in (None, "Z")


async def until(condition: Callable[[int], bool], *pids: int) -> None:
    """Poll (bounded) while `condition` holds for any of `pids`."""
    with anyio.fail_after(DEADLINE):
        while any(condition(pid) for pid in pids):
            await anyio.sleep(0.02)


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; killed and reaped whatever the test did."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def sleeper(spawned: list[subprocess.Popen[bytes]], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        ["sleep", "300"], start_new_session=True, env=None if env is None else {**os.environ, **env}
    )
    spawned.append(process)
    return process


async def test_what_a_command_left_running_ends_with_its_owner(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    owner = Scope()
    group = registry.group(owner)
    outcome = await run_command(
        LEAVE_BEHIND, cwd=tmp_path, env=os.environ, timeout_seconds=10, max_output_bytes=1000, group=group
    )
    pids = [int(pid) for pid in outcome.output.split()]
    assert outcome.exit_code == 0 and all(alive(pid) for pid in pids)
    assert {marker_of(pid, MARKER) for pid in pids} == {f"{registry.prefix}1"}  # found by it, setsid or not
    owner.dispose()
    await until(alive, *pids)
    registry.close()


def test_a_process_in_the_middle_of_an_exec_shows_its_marker(spawned: list[subprocess.Popen[bytes]]) -> None:
    # Read right after it started, such a process is often between two programs (the shell's
    # exec of setsid, then setsid's of sleep), when /proc shows it no environment yet.
    for n in range(40):
        process = subprocess.Popen(["sh", "-c", "exec setsid sleep 300"], env={**os.environ, MARKER: f"9.{n}"})
        spawned.append(process)
        assert marker_of(process.pid, MARKER) == f"9.{n}"


async def test_an_empty_environment_or_a_zombie_shows_no_marker(spawned: list[subprocess.Popen[bytes]]) -> None:
    # Both started with the marker: `env -i` then drops it, and a zombie's environment reads empty.
    cleared = subprocess.Popen(["env", "-i", "sleep", "300"], env={**os.environ, MARKER: "7.1"})
    spawned.append(cleared)
    done = subprocess.Popen(["true"], env={**os.environ, MARKER: "7.2"})
    spawned.append(done)
    await until(lambda pid: state(pid) != "S", cleared.pid)  # sleeping, its exec done
    await until(lambda pid: state(pid) != "Z", done.pid)  # exited, not yet reaped
    assert marker_of(cleared.pid, MARKER) is None and marker_of(done.pid, MARKER) is None


async def test_close_ends_adopted_children_and_adopting_reaps_the_exited_ones(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    registry = ProcessRegistry()
    stray = sleeper(spawned)  # a child that leads no group: an orphan to the registry
    done = subprocess.Popen(["true"])
    await until(lambda pid: state(pid) != "Z", done.pid)  # exited, not yet reaped
    registry.adopt()
    assert state(done.pid) is None  # an exited orphan is reaped
    registry.close()
    assert stray.wait() == -9


async def test_the_watchdog_ends_what_it_was_told_of_and_what_carries_the_marker(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    group, process, removed = sleeper(spawned), sleeper(spawned), sleeper(spawned)
    marked = sleeper(spawned, {MARKER: "4242.7"})
    other_server = sleeper(spawned, {MARKER: "99.1"})
    lines = [f"+g {group.pid}", f"+p {process.pid}", f"+p {removed.pid}", f"-p {removed.pid}", "nonsense", "+g x"]
    watch([line.encode() + b"\n" for line in lines], "4242.")
    assert [p.wait() for p in (group, process, marked)] == [-9, -9, -9]
    assert removed.poll() is None and other_server.poll() is None


async def test_the_watchdog_process_ends_its_groups_when_its_pipe_closes(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    watchdog = Watchdog.start("4242.")
    group = sleeper(spawned)
    watchdog.tell(f"+g {group.pid}")
    watchdog.stop()
    assert group.wait() == -9


def watchdogs() -> list[int]:
    """This process's children running the watchdog."""
    mine = [info.pid for info in processes() if info.ppid == os.getpid() and not info.zombie]
    return [pid for pid in mine if b"acp_agent.processes.watchdog" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def test_the_watchdog_starts_with_the_first_group_not_with_the_registry() -> None:
    registry = ProcessRegistry(watchdog=True)
    assert watchdogs() == []  # a server whose sessions run no command starts none
    registry.group(Scope())
    registry.group(Scope())
    [watchdog] = watchdogs()
    registry.close()
    assert not Path(f"/proc/{watchdog}").exists()  # reaped, not a zombie, once close returns
