"""`TerminalRunner`: bash through the editor's terminal (`terminal/*`): the request sequence, the
terminal embedded in the call, timeouts and cancellations (kill, then release, shielded), exit
statuses, truncation, and a client that refuses."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.acp import client_terminal
from acp_agent.acp.client_terminal import TerminalFailed, TerminalRunner
from acp_agent.acp.errors import ClientError
from acp_agent.environ import hide_variables
from acp_agent.kernel.context import Context
from acp_agent.sandbox.backends import LAUNCHER
from acp_agent.sandbox.policy import READ_ONLY
from acp_agent.sandbox.service import SANDBOX, Sandbox
from acp_agent.tools import RUNNER_SERVICE, BashParams, BashTool, ToolCallContext
from acp_agent.tools.errors import CommandNotStarted
from acp_agent.tools.scratch import scratch_dir

from ..tools.helpers import logged, logged_call
from .fakes import FakeConnection

pytestmark = pytest.mark.anyio

IDS = {"sessionId": "wire-session", "terminalId": "term-1"}


def answers(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "terminal/create": {"terminalId": "term-1"},
        "terminal/wait_for_exit": {"exitCode": 0},
        "terminal/output": {"output": "hello\n", "truncated": False, "exitStatus": {"exitCode": 0}},
        "terminal/kill": {},
        "terminal/release": None,
    }
    return {**base, **{key.replace("_", "/", 1): value for key, value in overrides.items()}}


async def run(conn: FakeConnection, call: ToolCallContext, *, timeout: float = 10, limit: int = 100) -> Any:
    runner = TerminalRunner(conn, "wire-session")  # type: ignore[arg-type]
    return await runner.run("echo hello", call=call, timeout_seconds=timeout, max_output_bytes=limit)


async def test_a_command_runs_in_a_client_terminal_embedded_in_the_call(tmp_path: Path) -> None:
    conn = FakeConnection(answers())
    call = logged_call(tmp_path)
    outcome = await run(conn, call)
    assert (outcome.output, outcome.exit_code, outcome.timed_out, outcome.signal) == ("hello\n", 0, False, None)
    assert conn.requests == [
        ("terminal/create", {"sessionId": "wire-session", "command": "bash", "args": ["-c", "echo hello"],
                             "env": [{"name": "TMPDIR", "value": str(scratch_dir(call))}],
                             "cwd": str(tmp_path), "outputByteLimit": 100}),
        ("terminal/wait_for_exit", IDS),
        ("terminal/output", IDS),
        ("terminal/release", IDS),
    ]  # fmt: skip
    [shown] = logged(call, "tool/display")
    assert shown.terminal_id == "term-1" and shown.locations is None and shown.diffs is None
    # Once it ended: its output and exit code, the card's raw output for clients without terminals.
    assert outcome.raw_output == {"output": "hello\n", "exitCode": 0}


async def test_the_client_cutting_the_beginning_is_said_before_the_output(tmp_path: Path) -> None:
    conn = FakeConnection(answers(terminal_output={"output": "the end\n", "truncated": True}))
    outcome = await run(conn, logged_call(tmp_path), limit=8)
    assert outcome.output == "[... earlier output omitted: the terminal kept the last 8 bytes ...]\nthe end\n"


@pytest.mark.parametrize(
    ("status", "exit_code", "name"),
    [
        ({"exitCode": 3, "signal": None}, 3, None),
        ({"exitCode": None, "signal": "SIGTERM"}, -15, None),
        ({"signal": "KILL"}, -9, None),  # a name without its SIG prefix
        ({"signal": "SIGNOPE"}, -1, "SIGNOPE"),
        ({}, -1, "unknown"),
    ],
)
async def test_exit_statuses(tmp_path: Path, status: dict[str, Any], exit_code: int, name: str | None) -> None:
    conn = FakeConnection(answers(terminal_wait_for_exit=status))
    outcome = await run(conn, logged_call(tmp_path))
    assert (outcome.exit_code, outcome.signal) == (exit_code, name)


async def test_a_timeout_kills_then_reads_the_output_then_releases(tmp_path: Path) -> None:
    async def never(params: dict[str, Any]) -> Any:
        await anyio.sleep_forever()

    output = {"output": "partial\n", "truncated": False, "exitStatus": {"signal": "SIGKILL"}}
    conn = FakeConnection(answers(terminal_wait_for_exit=never, terminal_output=output))
    outcome = await run(conn, logged_call(tmp_path), timeout=0.01)
    assert (outcome.output, outcome.exit_code, outcome.timed_out) == ("partial\n", -9, True)
    assert conn.methods == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/output",
        "terminal/release",
    ]


async def test_a_cancellation_kills_and_releases_the_terminal_before_it_goes_on(tmp_path: Path) -> None:
    waiting = anyio.Event()

    async def wait(params: dict[str, Any]) -> Any:
        waiting.set()
        await anyio.sleep_forever()

    async def slow_kill(params: dict[str, Any]) -> Any:
        await anyio.sleep(0.01)  # the cleanup is shielded: this wait is not cancelled
        return {}

    conn = FakeConnection(answers(terminal_wait_for_exit=wait, terminal_kill=slow_kill))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run, conn, logged_call(tmp_path))
        await waiting.wait()
        tasks.cancel_scope.cancel()
    assert conn.methods == ["terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/release"]


async def test_a_refused_create_fails_the_call_with_the_clients_message(tmp_path: Path) -> None:
    conn = FakeConnection(answers(terminal_create=ClientError(-32603, "no shell")))
    with pytest.raises(TerminalFailed, match="terminal/create answered error -32603: no shell"):
        await run(conn, logged_call(tmp_path))
    assert conn.methods == ["terminal/create"]  # nothing to release


async def test_a_failure_after_create_still_kills_and_releases_quietly_when_the_client_refuses(tmp_path: Path) -> None:
    conn = FakeConnection(answers(
        terminal_wait_for_exit={"exitCode": "zero"},  # not an exit status
        terminal_kill=ClientError(-32603, "gone"),
        terminal_release=ClientError(-32603, "gone"),
    ))  # fmt: skip
    with pytest.raises(TerminalFailed, match="the editor's answer to terminal/wait_for_exit is not valid"):
        await run(conn, logged_call(tmp_path))
    assert conn.methods == ["terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/release"]


async def test_bash_runs_through_the_runner_the_service_picks(tmp_path: Path) -> None:
    conn = FakeConnection(answers(terminal_wait_for_exit={"exitCode": 2}))
    call = logged_call(tmp_path)
    assert isinstance(call.ctx, Context)
    call.ctx.provide(RUNNER_SERVICE, lambda _call: TerminalRunner(conn, "wire-session"))  # type: ignore[arg-type]
    result = await BashTool().run(BashParams(command="echo hello"), call)
    assert result.is_error and result.plain_text() == "hello\n[exit code 2]"
    assert conn.methods[0] == "terminal/create"


async def test_bash_names_a_signal_it_only_knows_by_name(tmp_path: Path) -> None:
    conn = FakeConnection(answers(terminal_wait_for_exit={"signal": "SIGWEIRD"}))
    call = logged_call(tmp_path)
    call.ctx.provide(RUNNER_SERVICE, lambda _call: TerminalRunner(conn, "wire-session"))  # type: ignore[arg-type]
    result = await BashTool().run(BashParams(command="echo hello"), call)
    assert result.plain_text() == "hello\n[killed by signal SIGWEIRD]"


async def test_a_cancellation_during_the_create_waits_for_the_id_then_kills_and_releases(tmp_path: Path) -> None:
    asked, answer = anyio.Event(), anyio.Event()

    async def create(params: dict[str, Any]) -> Any:
        asked.set()
        await answer.wait()
        return {"terminalId": "term-1"}

    conn = FakeConnection(answers(terminal_create=create))
    call = logged_call(tmp_path)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run, conn, call)
        await asked.wait()
        tasks.cancel_scope.cancel()
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.01)  # the cancel is pending: the create still waits for its answer
            assert conn.methods == ["terminal/create"]
            answer.set()
    assert conn.methods == ["terminal/create", "terminal/kill", "terminal/release"]
    assert logged(call, "tool/display") == []  # never shown: the call was cancelled


async def test_a_cancellation_waits_for_a_create_never_answered_only_the_cleanup_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's timeout (30 s here) does not hold a cancellation up: past CLEANUP_SECONDS the
    create is abandoned (nothing was created, so nothing to kill or release) and the cancel lands."""
    monkeypatch.setattr(client_terminal, "CLEANUP_SECONDS", 0.05)
    asked = anyio.Event()

    async def never(params: dict[str, Any]) -> Any:
        asked.set()
        await anyio.sleep_forever()

    conn = FakeConnection(answers(terminal_create=never))
    call = logged_call(tmp_path)
    with anyio.fail_after(10):  # would hang until the 30 s timeout before
        async with anyio.create_task_group() as tasks:

            async def runs() -> None:
                await run(conn, call, timeout=30)

            tasks.start_soon(runs)
            await asked.wait()
            tasks.cancel_scope.cancel()
    assert conn.methods == ["terminal/create"]
    assert logged(call, "tool/display") == []


async def test_a_client_that_never_creates_the_terminal_fails_the_call_at_the_timeout(tmp_path: Path) -> None:
    async def never(params: dict[str, Any]) -> Any:
        await anyio.sleep_forever()

    conn = FakeConnection(answers(terminal_create=never))
    with pytest.raises(TerminalFailed, match="no answer to terminal/create within 0.01 s"):
        await run(conn, logged_call(tmp_path), timeout=0.01)
    assert conn.methods == ["terminal/create"]


async def test_the_servers_credential_variables_are_set_empty_in_the_editors_terminal(tmp_path: Path) -> None:
    conn = FakeConnection(answers())
    call = logged_call(tmp_path)
    hide_variables(call.ctx, ["MODEL_KEY", "A_TOKEN"])
    await run(conn, call)
    create = conn.requests[0][1]
    assert create["env"] == [
        {"name": "A_TOKEN", "value": ""},
        {"name": "MODEL_KEY", "value": ""},
        {"name": "TMPDIR", "value": str(scratch_dir(call))},
    ]


async def test_a_confined_command_goes_to_the_editors_terminal_behind_the_sandboxs_prefix(tmp_path: Path) -> None:
    conn = FakeConnection(answers())
    call = logged_call(tmp_path)
    call.ctx.provide(SANDBOX, Sandbox("landlock"))
    call.sandbox = READ_ONLY
    await run(conn, call)
    create = conn.requests[0][1]
    assert [create["command"], *create["args"][:3]] == [sys.executable, "-I", "-S", LAUNCHER]
    assert create["args"][3:5] == ["--policy", "read-only"] and create["args"][-3:] == ["bash", "-c", "echo hello"]


async def test_a_command_the_sandbox_cannot_confine_never_reaches_the_editor(tmp_path: Path) -> None:
    conn = FakeConnection(answers())
    call = logged_call(tmp_path)
    call.ctx.provide(SANDBOX, Sandbox("none"))
    with pytest.raises(CommandNotStarted, match="none is available here: the deployment turned the sandbox off"):
        await run(conn, call)
    assert conn.requests == []
