"""The harness client's terminals: `terminal/create`, `output`, `wait_for_exit`, `kill` and
`release`, served by really running the command (in the run's cwd unless the request names one),
as an editor runs it in a terminal panel.

The command runs in its own process group (a kill takes the whole group) with stdin from
/dev/null and stdout+stderr in one pipe, read as it comes. Past `outputByteLimit` the beginning is
dropped (at a character boundary) and the output reported `truncated`. Terminal ids are UUIDs,
which the normalizer numbers by first appearance. `open_terminals` kills and reaps whatever is still
running; `unreleased()` names the terminals the agent never released.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

import anyio
from anyio.abc import Process, TaskGroup
from pydantic import ConfigDict

from acp_agent.kernel.models import Model
from acp_agent.snapshot.client_fs import INTERNAL_ERROR, INVALID_PARAMS, RequestFailed, parse

METHOD_NOT_FOUND = -32601
METHODS = ("terminal/create", "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release")

REAP_SECONDS = 5.0


class _Params(Model):
    model_config = ConfigDict(extra="ignore")

    session_id: str


class EnvVariable(Model):
    model_config = ConfigDict(extra="ignore")

    name: str
    value: str


class CreateParams(_Params):
    command: str
    args: list[str] = []
    env: list[EnvVariable] = []
    cwd: str | None = None
    output_byte_limit: int | None = None


class TerminalParams(_Params):
    terminal_id: str


@dataclass(eq=False)
class Terminal:
    process: Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    done: anyio.Event = field(default_factory=anyio.Event)
    """Set once the command exited and its output is closed."""

    def feed(self, chunk: bytes) -> None:
        self.output += chunk
        if self.limit is not None and len(self.output) > self.limit:
            del self.output[: len(self.output) - self.limit]
            while self.output and self.output[0] & 0xC0 == 0x80:  # not in the middle of a character
                del self.output[0]
            self.truncated = True

    def exit_status(self) -> dict[str, Any]:
        code = self.process.returncode
        assert code is not None  # only asked once `done`
        return {"exitCode": code} if code >= 0 else {"signal": signal.Signals(-code).name}


class Terminals:
    """The terminals of one run; `tasks` reads their output while the run goes on."""

    def __init__(self, cwd: Path, tasks: TaskGroup) -> None:
        self.cwd = cwd
        self.tasks = tasks
        self.terminals: dict[str, Terminal] = {}

    async def handle(self, method: str, params: Any) -> dict[str, Any]:
        """The result of a `terminal/*` request, or `RequestFailed`."""
        if method not in METHODS:
            raise RequestFailed(METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "terminal/create":
            return await self._create(parse(CreateParams, params))
        request: TerminalParams = parse(TerminalParams, params)
        terminal = self.terminals.get(request.terminal_id)
        if terminal is None:
            raise RequestFailed(INVALID_PARAMS, f"Invalid params: no terminal {request.terminal_id!r}")
        if method == "terminal/output":
            status = {"exitStatus": terminal.exit_status()} if terminal.done.is_set() else {}
            text = terminal.output.decode("utf-8", errors="replace")
            return {"output": text, "truncated": terminal.truncated, **status}
        if method == "terminal/wait_for_exit":
            await terminal.done.wait()
            return terminal.exit_status()
        if method == "terminal/kill":
            _kill(terminal)
            return {}
        # terminal/release: kill what still runs, forget the terminal
        del self.terminals[request.terminal_id]
        await _reap(terminal)
        return {}

    async def _create(self, request: CreateParams) -> dict[str, Any]:
        env = {**os.environ, **{variable.name: variable.value for variable in request.env}}
        try:
            process = await anyio.open_process(
                [request.command, *request.args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=request.cwd or self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise RequestFailed(INTERNAL_ERROR, f"Internal error: cannot run {request.command!r}: {exc}") from None
        terminal_id = str(uuid4())
        terminal = self.terminals[terminal_id] = Terminal(process, request.output_byte_limit)
        self.tasks.start_soon(_pump, terminal)
        return {"terminalId": terminal_id}

    def unreleased(self) -> list[str]:
        """A problem for each terminal the agent created and did not release."""
        return [f"terminal {terminal_id} was never released" for terminal_id in self.terminals]

    async def aclose(self) -> None:
        """Kill and reap every terminal left."""
        for terminal in self.terminals.values():
            await _reap(terminal)
        self.terminals.clear()


@asynccontextmanager
async def open_terminals(cwd: Path) -> AsyncIterator[Terminals]:
    """The terminals of a run in `cwd`; on the way out every one left is killed and reaped, and
    what still runs in `tasks` (their readers, answers waiting for an exit) is cancelled."""
    async with anyio.create_task_group() as tasks:
        terminals = Terminals(cwd, tasks)
        try:
            yield terminals
        finally:
            await terminals.aclose()
            tasks.cancel_scope.cancel()


async def _pump(terminal: Terminal) -> None:
    assert terminal.process.stdout is not None  # opened with stdout=PIPE
    async for chunk in terminal.process.stdout:
        terminal.feed(chunk)
    await terminal.process.wait()
    terminal.done.set()


def _kill(terminal: Terminal) -> None:
    if not terminal.done.is_set():
        with suppress(ProcessLookupError):
            os.killpg(terminal.process.pid, signal.SIGKILL)


async def _reap(terminal: Terminal) -> None:
    _kill(terminal)
    with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_SECONDS):
        await terminal.done.wait()
        await terminal.process.aclose()
