"""Shutdown through the real server process: signals take stdin's path, and no process a command
left behind outlives its session or the server, a kill -9 of the server included."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from tests.e2e.test_durability import killed_server
from tests.e2e.test_sessions import Store, partial_shown, prompt, result_of, text, turns
from tests.e2e.wire import RECORD_CONFIG, server_command, spawn_server

pytestmark = pytest.mark.anyio

# One left in the command's group, one in a session of its own; both outlive the command.
LEAVE_BEHIND = "sleep 300 > /dev/null 2>&1 & echo $! > pids; setsid sleep 300 > /dev/null 2>&1 & echo $! >> pids"
BASH = {"id": "call_bg", "name": "bash", "arguments": {"command": LEAVE_BEHIND}}
DEADLINE = 10.0


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def left_behind(store: Store) -> list[int]:
    pids = [int(line) for line in (store.cwd / "pids").read_text().split()]
    assert len(pids) == 2 and all(alive(pid) for pid in pids)
    return pids


def alive(pid: int) -> bool:
    """Running (a zombie waits only for its reaper: it is gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def until_gone(pids: list[int]) -> None:
    with anyio.fail_after(DEADLINE):
        while any(alive(pid) for pid in pids):
            await anyio.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
async def test_a_signal_mid_turn_shuts_down_as_stdin_would(store: Store, signum: signal.Signals) -> None:
    """The running prompt answers `cancelled`, the log is complete, what the turn's command left
    running is ended, and the process exits 0 without a traceback."""
    async with spawn_server(config=RECORD_CONFIG, env=store.env([{"toolCalls": [BASH]}, {"hang": True}])) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = await store.new_session(wire)
        running = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Start it.")]})
        await wire.wait_for(partial_shown)
        pids = left_behind(store)
        wire.process.send_signal(signum)
        assert result_of(await wire.response(running)) == {"stopReason": "cancelled"}
        with anyio.fail_after(DEADLINE):
            assert await wire.process.wait() == 0
        await until_gone(pids)
    assert "Traceback" not in wire.stderr_text, wire.stderr_text
    assert turns(store.log(session_id)) == [(1, "aborted")]


async def test_what_a_command_leaves_running_outlives_its_turn_not_its_session(store: Store) -> None:
    async with store.serve([{"toolCalls": [BASH]}, {"text": "Started."}]) as wire:
        session_id = await store.new_session(wire)
        answered, _ = await prompt(wire, session_id, text("Start it."))
        assert result_of(answered) == {"stopReason": "end_turn"}
        pids = left_behind(store)  # the command and its turn are over: they run on
        await wire.request("session/close", {"sessionId": session_id})
        await until_gone(pids)


async def test_a_kill_9_of_the_server_leaves_nothing_running(store: Store) -> None:
    """The watchdog ends what the server knew of: the group, and the orphan it adopted."""
    async with killed_server(store, [{"toolCalls": [BASH]}, {"text": "Started."}]) as wire:
        session_id = await store.new_session(wire)
        answered, _ = await prompt(wire, session_id, text("Start it."))
        assert result_of(answered) == {"stopReason": "end_turn"}
        pids = left_behind(store)
    await until_gone(pids)


def test_a_client_that_stopped_reading_is_no_crash(store: Store) -> None:
    """Frames for a closed stdout are dropped (with one warning); stdin's end still shuts down
    cleanly."""
    env = {**os.environ, "ACP_AGENT_LOG": "WARNING", **store.env([])}
    process = subprocess.Popen(
        server_command(RECORD_CONFIG), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdout.close()
    process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n' * 2)
    process.stdin.close()
    assert process.wait(DEADLINE) == 0
    stderr = process.stderr.read().decode()
    assert stderr.count("stdout is closed") == 1 and "Traceback" not in stderr, stderr
