"""The `bash` tool's `CommandRunner` through the editor: ACP `terminal/*`.

A client that advertises `terminal` runs the command in a terminal of its own, which the tool call
embeds while it runs (`{"type": "terminal", "terminalId"}` content), so the user watches the
output live. The sequence: `terminal/create` (`bash -c <command>` behind the sandbox's prefix, in
the session's cwd, the tool's output budget as `outputByteLimit`, the server's credential
variables set empty and `TMPDIR` in `env`) -> `terminal/wait_for_exit` -> `terminal/output` (the final
output, and whether the client cut its beginning) -> `terminal/release`. On a timeout:
`terminal/kill`, then the output, then the release; on a cancellation: the kill and the release,
shielded (bounded), before the cancellation goes on. The create itself is shielded (bounded by the
command's timeout), so a cancellation never leaves a terminal the agent does not know of. Requests
name the top-level session on the wire (a child's calls show there).

A background job (`bash {run_in_background: true}`, `acp_agent.tools.jobs`) gets a terminal the
same way (`open_terminal`: the same argv, sandbox prefix and environment, plus the job's process
marker), left running: an `EditorTerminal` that the job reads (`terminal/output`), waits for
(`terminal/wait_for_exit`), kills (`terminal/kill`) and releases when it ends or its session
closes.
"""

from __future__ import annotations

import logging
import signal
from contextlib import suppress
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
from pydantic import ValidationError

from acp_agent.acp.connection import Connection
from acp_agent.acp.errors import ClientError
from acp_agent.acp.schema import (
    CreateTerminalParams,
    CreateTerminalResult,
    EnvVariable,
    Incoming,
    TerminalExitStatus,
    TerminalOutputResult,
    TerminalParams,
)
from acp_agent.environ.variables import credential_names
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.errors import TerminalFailed
from acp_agent.tools.runner import CommandOutcome, CommandRunner, JobTerminal, TerminalRead
from acp_agent.tools.sandboxing import command_env, sandbox_prefix

log = logging.getLogger(__name__)

SHELL = "bash"
CREATE_SECONDS = 30.0
"""How long a background job's `terminal/create` may take (a foreground command's is bounded by its
timeout)."""
CLEANUP_SECONDS = 5.0
"""Bound on the shielded kill and release after a cancellation: a client that does not answer
cannot hold the cancellation up for longer."""

R = TypeVar("R", bound=Incoming)


class TerminalRunner(CommandRunner):
    """Runs each command in a new client terminal of the session `session_id` (on the wire)."""

    def __init__(self, conn: Connection, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id

    async def run(
        self, command: str, *, call: ToolCallContext, timeout_seconds: float, max_output_bytes: int
    ) -> CommandOutcome:
        created = await self._create(self._params(command, call, {}, max_output_bytes), timeout_seconds)
        ids = _ids(self.session_id, created)
        status: TerminalExitStatus | None = None
        killed = False
        try:
            call.show(terminal_id=created.terminal_id)
            with anyio.move_on_after(timeout_seconds):
                status = await self._ask("terminal/wait_for_exit", ids, TerminalExitStatus)
            if status is None:  # timed out
                killed = True
                await self._ask("terminal/kill", ids)
            output = await self._ask("terminal/output", ids, TerminalOutputResult)
        finally:
            await self._clean_up(ids, kill=status is None and not killed)
        outcome = _outcome(output, status or output.exit_status, timed_out=killed, limit=max_output_bytes)
        # For a client that does not draw terminals: the output as the model reads it (the
        # terminal's bounded output) and the exit code (null when a signal ended the command).
        exit_code = outcome.exit_code if outcome.exit_code >= 0 else None
        return outcome._replace(raw_output={"output": outcome.output, "exitCode": exit_code})

    async def open_terminal(
        self, command: str, *, call: ToolCallContext, env: dict[str, str], max_output_bytes: int
    ) -> JobTerminal:
        """A background job's terminal: created as `run` creates one (the create bounded by
        `CREATE_SECONDS`), left running for the job."""
        created = await self._create(self._params(command, call, env, max_output_bytes), CREATE_SECONDS)
        return EditorTerminal(self, _ids(self.session_id, created), created.terminal_id)

    def _params(
        self, command: str, call: ToolCallContext, env: dict[str, str], max_output_bytes: int
    ) -> CreateTerminalParams:
        # The terminal runs in the editor's environment; ACP can set variables there, not remove
        # them, so the server's credential variables are set empty (the editor may hold them too).
        # The sandbox's prefix confines it there as it would here (the launcher is a path of this
        # machine, where the editor runs).
        hidden = sorted(credential_names(call.ctx))
        argv = [*sandbox_prefix(call), SHELL, "-c", command]
        variables = {**dict.fromkeys(hidden, ""), **command_env(call), **env}
        return CreateTerminalParams(
            session_id=self.session_id,
            command=argv[0],
            args=argv[1:],
            env=[EnvVariable(name=name, value=value) for name, value in variables.items()],
            cwd=str(call.cwd),
            output_byte_limit=max_output_bytes,
        )

    async def _create(self, create: CreateTerminalParams, timeout_seconds: float) -> CreateTerminalResult:
        """`terminal/create`, shielded: a cancellation must not abandon a terminal the client is
        creating (it could never be killed or released), but waits for the id CLEANUP_SECONDS at
        most, then lands past the create, after killing and releasing what was created."""
        created: CreateTerminalResult | None = None
        creating = anyio.CancelScope(shield=True, deadline=anyio.current_time() + timeout_seconds)
        refused: TerminalFailed | None = None  # raised past the task group, not in a group
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_hurry_on_cancel, creating)
            with creating:
                try:
                    created = await self._ask("terminal/create", create.dump(), CreateTerminalResult)
                except TerminalFailed as exc:
                    refused = exc
            tasks.cancel_scope.cancel()
        try:
            await anyio.lowlevel.checkpoint()  # a cancellation during the create lands here
        except anyio.get_cancelled_exc_class():
            if created is not None:
                await self._clean_up(_ids(self.session_id, created), kill=True)
            raise
        if refused is not None:
            raise refused
        if created is None:
            raise TerminalFailed(
                f"the editor's terminal failed: no answer to terminal/create within {timeout_seconds:g} s"
            )
        return created

    async def _ask(self, method: str, params: dict[str, Any], model: type[R] | None = None) -> Any:
        try:
            result = await self.conn.request(method, params)
        except ClientError as exc:
            raise TerminalFailed(
                f"the editor's terminal failed: {method} answered error {exc.code}: {exc.message}"
            ) from None
        if model is None:
            return result
        try:
            return model.model_validate(result)
        except ValidationError:
            raise TerminalFailed(f"the editor's answer to {method} is not valid: {str(result)[:200]}") from None

    async def _clean_up(self, ids: dict[str, Any], *, kill: bool) -> None:
        """Kill (after a cancellation or a failure) and release the terminal, whatever happens:
        shielded, bounded, and quiet about a client that refuses or went away."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_SECONDS):
            for method in ["terminal/kill", "terminal/release"] if kill else ["terminal/release"]:
                try:
                    await self.conn.request(method, ids)
                except ClientError as exc:
                    log.debug("%s of terminal %s: %s", method, ids["terminalId"], exc)


class EditorTerminal(JobTerminal):
    """A background job's terminal (`TerminalRunner.open_terminal`)."""

    def __init__(self, runner: TerminalRunner, ids: dict[str, Any], terminal_id: str) -> None:
        self._runner = runner
        self._ids = ids
        self.terminal_id = terminal_id

    async def read(self) -> TerminalRead:
        output: TerminalOutputResult = await self._runner._ask("terminal/output", self._ids, TerminalOutputResult)
        return TerminalRead(output.output, output.truncated)

    async def wait(self) -> int:
        status: TerminalExitStatus = await self._runner._ask("terminal/wait_for_exit", self._ids, TerminalExitStatus)
        return _exit(status)[0]  # a signal known by its name only is -1

    async def kill(self) -> None:
        await self._runner._ask("terminal/kill", self._ids)

    async def release(self) -> None:
        await self._runner._clean_up(self._ids, kill=True)


async def _hurry_on_cancel(creating: anyio.CancelScope) -> None:
    """Wait until cancelled: by the caller's cancellation (the create then gets CLEANUP_SECONDS
    more at most) or by the create's end."""
    try:
        await anyio.sleep_forever()
    finally:
        creating.deadline = min(creating.deadline, anyio.current_time() + CLEANUP_SECONDS)


def _ids(session_id: str, created: CreateTerminalResult) -> dict[str, Any]:
    return TerminalParams(session_id=session_id, terminal_id=created.terminal_id).dump()


def _outcome(
    output: TerminalOutputResult, status: TerminalExitStatus | None, *, timed_out: bool, limit: int
) -> CommandOutcome:
    text = output.output
    if output.truncated:
        text = f"[... earlier output omitted: the terminal kept the last {limit} bytes ...]\n{text}"
    exit_code, name = _exit(status)
    return CommandOutcome(text, exit_code, timed_out=timed_out, signal=name)


def _exit(status: TerminalExitStatus | None) -> tuple[int, str | None]:
    """An exit status as `CommandOutcome` has it: the code, or minus the signal's number; a signal
    known only by its name (or no status at all) is -1 with the name."""
    if status is not None and status.exit_code is not None:
        return status.exit_code, None
    name = status.signal if status is not None and status.signal else "unknown"
    with suppress(KeyError):
        return -signal.Signals[name if name.startswith("SIG") else f"SIG{name}"].value, None
    return -1, name
