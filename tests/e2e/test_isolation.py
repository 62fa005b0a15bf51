"""A session's failure is that session's, through the real server process: an exception of any
kind at any place that serves one session (its publication, a turn's start, a subscriber of its
log, its command list, a write of its log) fails that session's method or turn with an error
naming what failed, is logged on stderr, and the server goes on serving every session.

The disk cases need a file system that fills up or goes read-only under a root user (CI runs as
root, whom permission bits do not stop): a small tmpfs, mounted here. Where the machine does not
allow the mount, they are skipped with the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.faults import FAULT_FILE
from tests.e2e.test_sessions import error_of, load, opened, prompt, result_of, text, turns
from tests.e2e.wire import RECORD_CONFIG, SNAPSHOT_CONFIG, Wire, spawn_server
from tests.mounts import mount, skip, tmpfs

pytestmark = pytest.mark.anyio

FAULTS_CONFIG = f"""\
- include: {SNAPSHOT_CONFIG}
- id: model
  name: tests.e2e.faults
"""


class Server:
    """A server of the faults composition on one sessions directory, with two workspaces: one
    that the test makes fail, and one that never does."""

    def __init__(self, tmp_path: Path, sessions: Path) -> None:
        self.sessions = sessions
        self.config = tmp_path / "cordis.yml"
        self.config.write_text(FAULTS_CONFIG, encoding="utf-8")
        self.faulty = tmp_path / "faulty"
        self.healthy = tmp_path / "healthy"
        for cwd in (self.faulty, self.healthy):
            cwd.mkdir()
            (cwd / "notes.txt").write_text("".join(f"note {i}: {'x' * 60}\n" for i in range(200)), encoding="utf-8")

    def spawn(self) -> Any:
        return spawn_server(config=self.config, env={"ACP_AGENT_SESSIONS": str(self.sessions)})

    def fault(self, place: str, kind: str = "ValueError", **more: Any) -> None:
        (self.faulty / FAULT_FILE).write_text(json.dumps({"place": place, "kind": kind, **more}), encoding="utf-8")

    def mend(self) -> None:
        (self.faulty / FAULT_FILE).unlink()

    def log(self, session_id: str) -> list[dict[str, Any]]:
        path = self.sessions / session_id / "session.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def new(wire: Wire, cwd: Path) -> str:
    return str(result_of(await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []}))["sessionId"])


async def works(wire: Wire, session_id: str) -> None:
    """A prompt of `session_id` runs its turn through: a tool call, then the answer."""
    answered, shown = await prompt(wire, session_id, text("go"))
    assert result_of(answered) == {"stopReason": "end_turn"}, answered
    said = [f["params"]["update"] for f in shown if f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert [u["content"]["text"] for u in said] == ["done."]


async def fails(wire: Wire, session_id: str) -> str:
    """A prompt of `session_id` that fails: its error's message."""
    answered, _ = await prompt(wire, session_id, text("go"))
    code, message = error_of(answered)
    assert code == -32603, answered
    return message


@pytest.fixture
def server(tmp_path: Path) -> Server:
    return Server(tmp_path, tmp_path / "sessions")


SUBSCRIBER_FAULTS = [
    ("turn/start", "KeyError", "KeyError: 'forced'"),
    ("user/message", "UnicodeEncodeError", "UnicodeEncodeError: 'utf-8' codec can't encode character"),
    ("tool/call", "TypeError", "TypeError: forced: not serializable"),
    ("tool/result", "OSError", "OSError: [Errno 5] Input/output error"),
    ("step/end", "RecursionError", "RecursionError: maximum recursion depth exceeded (forced)"),
    ("turn/end", "AssertionError", "AssertionError: forced"),
]


async def test_an_exception_at_any_place_fails_only_its_sessions_method_or_turn(server: Server) -> None:
    async with server.spawn() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        healthy = await new(wire, server.healthy)
        await works(wire, healthy)

        # Publication: session/new answers what failed; nothing of the session stays open.
        for kind, said in [
            ("ValueError", "ValueError: forced: a value out of range"),
            ("OSError", "OSError: [Errno 5]"),
        ]:
            server.fault("published", kind)
            code, message = error_of(await wire.request("session/new", {"cwd": str(server.faulty), "mcpServers": []}))
            assert code == -32603 and message.startswith(f"Internal error: session/new failed: {said}"), message
        server.mend()
        faulty = await new(wire, server.faulty)
        await works(wire, faulty)

        # A turn's start (where a project's files are read): the turn fails before it is logged.
        server.fault("turn-starting", "RecursionError")
        message = await fails(wire, faulty)
        assert message == "Internal error: turn failed: RecursionError: maximum recursion depth exceeded (forced)"
        await works(wire, healthy)

        # A subscriber of the log, at each kind of event: the turn fails naming the exception, the
        # next one runs (a turn the failure left open is ended first).
        for on, kind, said in SUBSCRIBER_FAULTS:
            server.fault("subscriber", kind, on=on)
            message = await fails(wire, faulty)
            assert message.startswith(f"Internal error: turn failed: {said}"), (on, message)
            server.mend()
            await works(wire, faulty)
            await works(wire, healthy)

        # The session is loaded again: a failed publication leaves it closed and unlocked.
        await wire.request("session/close", {"sessionId": faulty})
        server.fault("published", "KeyError")
        code, message = error_of((await load(wire, faulty, server.faulty))[0])
        assert (code, message) == (-32603, "Internal error: session/load failed: KeyError: 'forced'")
        server.mend()
        assert opened((await load(wire, faulty, server.faulty))[0])
        await works(wire, faulty)

        # A command list that cannot be made: the session goes on, with the list it had.
        server.fault("commands")
        listless = await new(wire, server.faulty)
        await works(wire, listless)
        await works(wire, healthy)
        server.mend()
        assert await wire.finish() == 0
    stderr = wire.stderr_text
    assert "session/new failed" in stderr and "cannot announce its commands" in stderr and "turn failed" in stderr
    assert wire.garbage == []
    # Every turn of the failing session ended in its log, failed or completed.
    log = server.log(faulty)
    ends = turns(log)
    assert [turn for turn, _ in ends] == list(range(1, len(ends) + 1))
    assert len([e for e in log if e.get("type") == "turn/start"]) == len(ends)
    assert {kind for _, kind in ends} == {"completed", "error"}


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", "1m") as mounted:
        yield mounted


async def test_a_sessions_directory_gone_read_only_fails_session_new_saying_so(server: Server) -> None:
    """A read-only bind mount over the sessions directory, made while the server runs (and a
    session is open there), then taken away."""
    async with server.spawn() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        opened_before = await new(wire, server.healthy)
        sessions = str(server.sessions)
        why = mount("--bind", sessions, sessions) or mount("-o", "remount,bind,ro", sessions)
        if why is not None:
            subprocess.run(["umount", sessions], capture_output=True)
            skip(why)
        try:
            code, message = error_of(await wire.request("session/new", {"cwd": str(server.healthy), "mcpServers": []}))
        finally:
            subprocess.run(["umount", sessions], check=True)
        assert code == -32603 and message.startswith(
            f"Internal error: cannot start a session: cannot write the session log in {server.sessions}/"
        )
        assert message.endswith(": Read-only file system (EROFS)"), message
        await works(wire, await new(wire, server.healthy))
        await works(wire, opened_before)
        assert await wire.finish() == 0


def shown_kinds(frames: list[dict[str, Any]]) -> list[str]:
    kinds = []
    for frame in frames:
        update = frame["params"]["update"]
        kinds.append(update["sessionUpdate"] + (f":{update['status']}" if update.get("status") else ""))
    return kinds


async def test_a_full_disk_fails_the_turn_that_met_it_and_the_session_comes_back(tmp_path: Path, disk: Path) -> None:
    server = Server(tmp_path, disk / "sessions")
    filler = disk / "filler"
    async with server.spawn() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        faulty, other = await new(wire, server.faulty), await new(wire, server.healthy)
        await works(wire, faulty)
        server.fault("fill", on="tool/call", filler=str(filler))
        answered, shown = await prompt(wire, faulty, text("go"))
        code, message = error_of(answered)
        directory = server.sessions / faulty
        assert (code, message) == (
            -32603,
            (
                f"Internal error: turn failed: cannot write the session log in {directory}: "
                "No space left on device (ENOSPC)"
            ),
        )
        # The call's start was logged and shown; its result (the file, larger than the room
        # left) was not, nor the answer. The room its cut line gave back may take the call's
        # error and the turn's end: shown only once logged (checked below).
        kinds = shown_kinds(shown)
        assert "tool_call:in_progress" in kinds and "agent_message_chunk" not in kinds
        assert "tool_call_update:completed" not in kinds
        code, message = error_of((await prompt(wire, other, text("go")))[0])  # full for every session, alive
        assert code == -32603 and "No space left on device" in message
        server.mend()
        filler.unlink()  # room again: both sessions go on, the failed turn ended first
        await works(wire, faulty)
        await works(wire, other)
        assert await wire.finish() == 0
    # What the editor was shown is what the log holds, and it loads.
    log = server.log(faulty)
    assert [kind for _, kind in turns(log)] == ["completed", "error", "completed"]
    results = [e["data"] for e in log if e["type"] == "tool/result"]
    assert [r.get("isError", False) for r in results] == [False, True, False]  # the call of the full disk failed
    async with server.spawn() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        loaded, _ = await load(wire, faulty, server.faulty)
        assert opened(loaded)
        await works(wire, faulty)


async def test_a_session_whose_directory_was_removed_says_so_and_the_others_go_on(server: Server) -> None:
    async with server.spawn() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        removed, other = await new(wire, server.faulty), await new(wire, server.healthy)
        await works(wire, removed)
        shutil.rmtree(server.sessions / removed)
        answered, shown = await prompt(wire, removed, text("go"))
        assert error_of(answered) == (
            -32603,
            f"Internal error: turn failed: cannot write the session log in {server.sessions / removed}:"
            " the log file was deleted (ENOENT)",
        )
        assert shown == []
        await works(wire, other)
        assert await wire.finish() == 0


async def test_tool_call_arguments_nested_deep_end_at_worst_their_turn(tmp_path: Path) -> None:
    """Arguments nested deeper than a line of the log can hold: whatever the turn makes of them,
    the server lives, the next prompt is answered, and the log loads in the next process."""
    from tests.e2e.test_sessions import Store

    store = Store(tmp_path)
    deep: Any = "leaf"
    for _ in range(300):
        deep = {"a": deep}
    call = {"id": "call_deep", "name": "todo_write", "arguments": {"todos": deep}}
    script = {"s1": [{"toolCalls": [call]}, {"text": "After."}, {"text": "Next."}]}
    async with spawn_server(config=RECORD_CONFIG, env=store.env(script)) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = await store.new_session(wire)
        answered, _ = await prompt(wire, session_id, text("deep"))
        assert "result" in answered or answered["error"]["code"] == -32603
        answered, _ = await prompt(wire, session_id, text("again"))
        assert result_of(answered) == {"stopReason": "end_turn"}
        assert await wire.finish() == 0
    async with spawn_server(config=RECORD_CONFIG, env=store.env([])) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        params = {"sessionId": session_id, "cwd": str(store.cwd), "mcpServers": []}
        loaded, _ = await load(wire, session_id, store.cwd)
        if "error" in loaded:  # the replay's frames could not be made: the load says so, and the log reopens
            assert loaded["error"]["message"].startswith("Internal error: session/load failed: "), loaded
            assert opened(await wire.request("session/resume", params))
        assert await wire.finish() == 0
