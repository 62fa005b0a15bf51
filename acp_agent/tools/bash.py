"""The `bash` tool, and the plugin that registers it.

The call's `CommandRunner` runs the command (`runner.py`): the `command_runner` service's pick
(the editor's terminal), else `LocalRunner`. Locally a command runs as `bash -c` in its own session
(so its own process group), with stdin from /dev/null and stdout+stderr merged into one pipe that
is read while the command runs. A timeout or a cancellation kills the whole group, so nothing the
command started outlives the call; in the server, what a finished command left running (a
background job, a `setsid` daemon) is ended with the agent's session (`acp_agent.processes`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Final

import anyio
from anyio.abc import ByteReceiveStream, Process
from pydantic import Field, model_validator

from acp_agent.environ.variables import child_environment, hide_variables
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.processes.registry import PROCESSES, CommandGroup
from acp_agent.processes.spawn import open_leader
from acp_agent.session.content import TextContent
from acp_agent.session.events import ToolError
from acp_agent.tools import texts
from acp_agent.tools.base import (
    Tool,
    ToolCallContext,
    ToolParams,
    ToolPresentation,
    ToolPreview,
    ToolResult,
    code_block,
)
from acp_agent.tools.errors import CommandNotStarted
from acp_agent.tools.overflow import Overflow
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.runner import JOBS, RUNNER_SERVICE, CommandOutcome, CommandRunner
from acp_agent.tools.sandboxing import command_env, refused_write, sandbox_prefix
from acp_agent.tools.scratch import scratch_dir

SHELL = shutil.which("bash") or "/bin/sh"
# Bound on the shielded kill-and-reap after a timeout or a cancellation: a SIGKILLed group dies at
# once, so this only matters if the kernel cannot reap it, and then we stop waiting.
_REAP_SECONDS = 5.0


# The shape the recorded fixtures call it with. The docstring is model-visible (schema description).
class BashParams(ToolParams):
    """Arguments of the bash tool."""

    command: str = Field(description="The shell command to run.")
    description: str = Field(default="", description="A few words saying what the command does, shown to the user.")
    escalate: bool = Field(
        default=False,
        description=(
            "Run this command outside the sandbox (the user is asked first). Only for a command that"
            " failed in the sandbox and needs to write outside the project or use what the sandbox hides."
        ),
    )
    justification: str = Field(
        default="",
        description="Required with escalate: why the command needs to run outside the sandbox, shown to the user.",
    )

    @model_validator(mode="after")
    def _justified(self) -> BashParams:
        if self.escalate and not self.justification.strip():
            raise ValueError("justification is required when escalate is true")
        return self

    run_in_background: bool = Field(
        default=False,
        description="Run it as a background job (a dev server, a watcher): the answer is its job id and "
        "first output; read more with job_output, stop it with job_kill.",
    )


class BashTool(Tool[BashParams]):
    """Runs a shell command in the call's working directory and returns its output."""

    name = "bash"
    Params = BashParams
    needs_approval = True
    runs_commands = True

    def __init__(self, *, timeout_seconds: float = 120, max_output_bytes: int = 30000) -> None:
        self.timeout_seconds = timeout_seconds
        self.max_output_bytes = max_output_bytes
        self.description = (
            "Run a shell command with bash in the session's working directory. stdout and stderr "
            "are returned together, followed by the exit code when it is not 0. stdin is empty. "
            f"The command is killed after {timeout_seconds:g} s; output beyond "
            f"{max_output_bytes} bytes is cut in the middle, and then kept whole in a file the "
            "answer names (read_file or grep it). For a long-running command (a dev "
            "server, a watcher) set run_in_background; a `cmd &` must redirect its output "
            "(`cmd > log 2>&1 &`), or the call waits for it."
        )

    async def run(self, params: BashParams, call: ToolCallContext) -> ToolResult:
        if params.run_in_background:
            jobs = call.ctx.find(JOBS)
            if jobs is None:
                return ToolResult.failure(texts.NO_BACKGROUND, "not_available")
            return await jobs.start(params.command, call)
        try:
            outcome = await runner_for(call).run(
                params.command,
                call=call,
                timeout_seconds=self.timeout_seconds,
                max_output_bytes=self.max_output_bytes,
            )
        except CommandNotStarted as exc:
            return ToolResult.failure(str(exc), "not_started")
        if outcome.exit_code != 0:
            refused = refused_write(outcome.output, call)
            if refused is not None:
                outcome = outcome._replace(output=_add_line(outcome.output, refused))
        return _result(outcome, self.timeout_seconds).model_copy(update={"raw_output": outcome.raw_output})

    def command(self, params: BashParams) -> str | None:
        return params.command

    def escalation(self, params: BashParams) -> str | None:
        return params.justification if params.escalate else None

    async def preview(self, params: BashParams, call: ToolCallContext) -> ToolPreview | None:
        if not params.escalate:
            return None
        return ToolPreview(notes=[escalation_note(params.command, params.justification)])

    def present(self, params: BashParams) -> ToolPresentation:
        return ToolPresentation(
            title=params.command,
            kind="execute",
            content=[params.description] if params.description else [],
        )

    def render_result(self, result: ToolResult) -> list[str]:
        return [code_block(result.plain_text(), "console")]


class LocalRunner(CommandRunner):
    """The default: `run_command`, a process group of this machine, with the server's rights."""

    async def run(
        self, command: str, *, call: ToolCallContext, timeout_seconds: float, max_output_bytes: int
    ) -> CommandOutcome:
        # In the server, the command's group and what it leaves behind end with the agent's session.
        group = call.ctx.get(PROCESSES).group(call.scope) if call.ctx.has(PROCESSES) else None
        return await run_command(
            command,
            cwd=call.cwd,
            env={**child_environment(call.ctx), **command_env(call)},
            prefix=sandbox_prefix(call),
            timeout_seconds=timeout_seconds,
            max_output_bytes=max_output_bytes,
            group=group,
            spill=lambda: Overflow(scratch_dir(call)),
        )


LOCAL: Final[CommandRunner] = LocalRunner()


def runner_for(call: ToolCallContext) -> CommandRunner:
    """The runner `call` goes through: the `command_runner` service's pick, else `LOCAL`."""
    return call.pick(RUNNER_SERVICE, LOCAL)


async def run_command(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    max_output_bytes: int,
    group: CommandGroup | None = None,
    prefix: Sequence[str] = (),
    spill: Callable[[], Overflow] | None = None,
) -> CommandOutcome:
    """Run `command` with the shell in `cwd` and the environment `env` (the server's, without its
    credential variables: `child_environment`); kill its process group on timeout or cancellation.

    The call lasts until the shell has exited and every process holding its output has closed it.
    With a `group` (of the server's process registry), the command carries its marker, and what it
    leaves running (`cmd &`, `setsid cmd`) is ended when the group's owner goes. `prefix` goes
    before the shell's argv (the sandbox's: `tools.sandboxing.shell_argv`).

    With a `spill`, output past `max_output_bytes` is also kept whole (bounded) in the overflow
    file it makes, which the answer names.

    Raises `CommandNotStarted` when the shell cannot start (nothing ran).
    """
    output = _OutputBuffer(max_output_bytes, spill)
    process = await start_command(command, cwd=cwd, env=env, group=group, prefix=prefix)
    finished = False
    try:
        with anyio.move_on_after(timeout_seconds):
            async with anyio.create_task_group() as tg:
                # Read while waiting: a command writing more than the pipe holds would block.
                assert process.stdout is not None  # opened with stdout=PIPE
                tg.start_soon(_pump, process.stdout, output)
                await process.wait()
            finished = True  # the shell exited and its output is closed: nothing left to kill
    finally:
        await reap(process, kill=not finished)
        output.close()
        if group is not None:
            group.exited()
    assert process.returncode is not None  # reap waited for it
    return CommandOutcome(output.text(), process.returncode, timed_out=not finished)


async def start_command(
    command: str, *, cwd: Path, env: Mapping[str, str], group: CommandGroup | None, prefix: Sequence[str] = ()
) -> Process:
    """Start `command` with the shell in `cwd`, in a session (so a process group) of its own, stdin
    from /dev/null, stdout and stderr merged into one pipe; with a `group`, carrying its marker and
    registered as started. The one place a command is spawned: a foreground call and a background
    job alike. Raises `CommandNotStarted` when the shell cannot start (nothing ran)."""
    try:
        return await open_leader(
            [*prefix, SHELL, "-c", command],
            cwd=cwd,
            env=env,
            group=group,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    except OSError as exc:
        raise CommandNotStarted(_not_started(exc, cwd)) from exc


async def _pump(stream: ByteReceiveStream, output: _OutputBuffer) -> None:
    async for chunk in stream:
        output.feed(chunk)


async def reap(process: Process, *, kill: bool) -> None:
    """Kill `process`'s group (with `kill`) and wait for it, shielded from a cancellation and
    bounded: what a tool started never keeps running unseen."""
    # Shielded: on cancellation the group must still be killed and the shell reaped, or it would
    # keep running unseen; bounded so a stuck reap cannot hold the cancellation up for long.
    with anyio.CancelScope(shield=True), anyio.move_on_after(_REAP_SECONDS):
        if kill:
            # The group id is the shell's pid (start_new_session); it may be gone already.
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        await process.aclose()


class _OutputBuffer:
    """Keeps the first and the last bytes of a stream within a budget, and counts the rest; with a
    `spill`, the whole stream also goes to the overflow file it makes once the budget is passed."""

    def __init__(self, limit: int, spill: Callable[[], Overflow] | None = None) -> None:
        self._limit = limit
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self._omitted = 0
        self._spill = spill
        self.overflow: Overflow | None = None

    def feed(self, chunk: bytes) -> None:
        if self.overflow is not None:
            self.overflow.write(chunk)
        room = self._head_limit - len(self._head)
        self._head += chunk[:room]
        self._tail += chunk[room:]
        excess = len(self._tail) - self._tail_limit
        if excess > 0:
            if self.overflow is None and self._spill is not None:
                self.overflow = self._spill()  # nothing was dropped yet: all of it so far goes in
                self.overflow.write(bytes(self._head + self._tail))
            del self._tail[:excess]
            self._omitted += excess

    def close(self) -> None:
        if self.overflow is not None:
            self.overflow.close()

    def text(self) -> str:
        if not self._omitted:
            # Decoded in one piece so a character split between head and tail survives.
            return bytes(self._head + self._tail).decode("utf-8", "replace")
        if self.overflow is not None:
            note = f"\n{texts.output_kept(self._omitted, self.overflow.total, self.overflow.path)}\n"
        else:
            note = f"\n[... {self._omitted} bytes of output omitted ...]\n"
        return self._head.decode("utf-8", "replace") + note + self._tail.decode("utf-8", "replace")


def cut_middle(text: str, max_bytes: int) -> str:
    """`text` cut in the middle past `max_bytes` (UTF-8) with the note bash output gets: how tools
    whose output is not a stream (an MCP server's result) are cut the same way."""
    buffer = _OutputBuffer(max_bytes)
    buffer.feed(text.encode("utf-8"))
    return buffer.text()


def _result(outcome: CommandOutcome, timeout_seconds: float) -> ToolResult:
    text = outcome.output
    if outcome.timed_out:
        message = f"Command timed out after {timeout_seconds:g} s"
        return ToolResult(
            content=[TextContent(text=_add_line(text, message))],
            is_error=True,
            error=ToolError(code="timeout", message=message),
        )
    if outcome.exit_code == 0:
        return ToolResult.text(text or "(no output)")
    status = (
        f"[exit code {outcome.exit_code}]"
        if outcome.exit_code > 0
        else f"[killed by signal {outcome.signal or -outcome.exit_code}]"
    )
    return ToolResult(content=[TextContent(text=_add_line(text, status))], is_error=True)


def _not_started(exc: OSError, cwd: Path) -> str:
    if exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
        return f"the command did not start: the working directory {cwd} is not usable ({exc.strerror})"
    return f"the command did not start: {exc.strerror or exc}"


def escalation_note(command: str, justification: str) -> str:
    """What the user reads when a command asks to run outside the sandbox."""
    return f"Run without the sandbox: {command}\nWhy: {justification}"


def _add_line(text: str, line: str) -> str:
    """`line` after `text`, on a line of its own."""
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line


# The plugin: module attributes (not the tool class's), as the loader expects.
name = "bash"
inject = ("tools",)


class Config(PluginConfig):
    """Configuration of the `bash` plugin row."""

    timeout_seconds: float = Field(default=120, gt=0)
    max_output_bytes: int = Field(default=30000, gt=0)
    hide_env: list[str] = Field(default_factory=list)
    """More credential variables of the server that commands must not see (the model rows'
    `apiKeyEnv` are hidden already); they are kept from every child process (`acp_agent.environ`)."""


def apply(ctx: Context, config: Config) -> Disposer:
    """Register a `bash` tool for every agent, and hide the `hideEnv` variables from child processes."""
    tool = BashTool(timeout_seconds=config.timeout_seconds, max_output_bytes=config.max_output_bytes)
    disposer: Disposer = combine(hide_variables(ctx, config.hide_env), ctx.get(TOOLS).register(tool))
    return disposer
