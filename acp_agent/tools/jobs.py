"""Background jobs: `bash {run_in_background: true}` and the tools `job_output`, `job_kill` and
`job_list`, and the plugin that provides them.

A job runs where the call's `CommandRunner` says (`runner_for`): in an editor terminal when the
client has them (`TerminalJob`: `open_terminal`, embedded in the call's card, kept there after the
call ends), else in a process group of this machine (`LocalJob`: `bash.start_command`, the very
function a foreground call spawns with). Either way it is confined as a foreground command there is
(the sandbox's prefix, the session's `TMPDIR`) and carries the marker of a command group of the
server's process registry under the calling agent's scope, so it ends when the agent's session
closes or the server exits, however it exits (a terminal is also killed and released then). Its
output goes into a bounded buffer of what the model has not read yet (older output is dropped
and counted): a local job's read from its pipe by a task of the context's task group, a terminal
job's asked of the terminal (`terminal/output`) at each read, at its start and at its end, then
the terminal is released.
When a job ends and the model has not seen it end, the agent's next model call is told with one
line, logged as a `user/message` of source `job` (model-visible, never shown as the user's words).
"""

from __future__ import annotations

import logging
import os
import signal
from abc import ABC, abstractmethod
from contextlib import suppress
from typing import Final, Literal

import anyio
from anyio.abc import Process
from pydantic import Field

from acp_agent.environ.variables import child_environment
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.kernel.tables import take
from acp_agent.processes.registry import PROCESSES, CommandGroup
from acp_agent.session.content import TextContent
from acp_agent.session.events import Source, UserMessageData, UserMessageEvent
from acp_agent.tools import texts
from acp_agent.tools.base import (
    BEFORE_MODEL_CALL,
    CallingAgent,
    Tool,
    ToolCallContext,
    ToolParams,
    ToolPresentation,
    ToolResult,
    code_block,
)
from acp_agent.tools.bash import reap, runner_for, start_command
from acp_agent.tools.errors import CommandNotStarted, TerminalFailed
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.runner import JOBS, JobTerminal
from acp_agent.tools.sandboxing import command_env, sandbox_prefix

log = logging.getLogger(__name__)

JOB_SOURCE: Final = "job"
"""The source of the `user/message` that tells the model a job ended."""
FIRST_OUTPUT_SECONDS: Final = 1.0
"""How long a start waits for the job's first output (or its end) before it answers."""

POLL_SECONDS: Final = 0.2
"""How often a read waiting for new output asks an editor terminal (which tells nothing itself)."""
ANCHOR_CHARS: Final = 256
"""How much of the end of what was read finds its place again in a terminal that dropped its
beginning."""

State = Literal["running", "exited", "killed"]


class Job(ABC):
    """One background command of an agent: its unread output and its state; where it runs is the
    subclass's (`LocalJob`, `TerminalJob`)."""

    def __init__(self, number: int, command: str, limit: int) -> None:
        self.id = f"job-{number}"
        self.command = command
        self.limit = limit
        self.state: State = "running"
        self.exit_code: int | None = None
        self.seen_end = False
        """The model has read the job's end (a read, a kill, or the notice)."""
        self._unread = bytearray()
        self._dropped = 0
        self._changed = anyio.Event()
        self.cancel = anyio.CancelScope()

    # -- what the job's follower reports -------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        self._unread += chunk
        excess = len(self._unread) - self.limit
        if excess > 0:
            del self._unread[:excess]
            self._dropped += excess
        self._wake()

    def ended(self, code: int) -> None:
        if self.state == "running":
            self.state = "exited"
        self.exit_code = code
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    # -- where it runs -------------------------------------------------------------------------

    @abstractmethod
    async def follow(self) -> None:
        """Follow the job until it ends (a task of the context's task group): its output, its
        end; on a cancellation (the session closes, the server stops) end it."""

    @abstractmethod
    async def stop(self, grace_seconds: float) -> None:
        """End the job (job_kill) and wait for its end, bounded."""

    @abstractmethod
    def close(self) -> None:
        """End the job at once (its session closes): nothing of it may go on running."""

    @abstractmethod
    async def pull(self) -> None:
        """Bring in what the job printed that the follower does not bring by itself."""

    # -- what the tools ask ---------------------------------------------------------------------

    async def changed(self, seconds: float) -> None:
        """Wait until the job prints or ends, at most `seconds`."""
        if self.state == "running" and not self._unread:
            with anyio.move_on_after(seconds):
                await self._changed.wait()

    async def end(self) -> None:
        """Wait until the job has ended."""
        while self.state == "running":
            await self._changed.wait()

    def take(self) -> str:
        """The output not read yet (it is read now), with a note when older output was dropped."""
        text = self._unread.decode("utf-8", "replace")
        if self._dropped:
            text = texts.job_output_dropped(self._dropped) + "\n" + text
        self._unread.clear()
        self._dropped = 0
        if self.state != "running":
            self.seen_end = True
        return text

    def status(self) -> str:
        if self.state == "running":
            return texts.job_running(self.id)
        if self.state == "killed":
            return texts.job_killed(self.id)
        assert self.exit_code is not None
        return texts.job_exited(self.id, self.exit_code)


class LocalJob(Job):
    """A job in a process group of this machine, spawned by `bash.start_command` (as a foreground
    command is), its output read from its pipe as it comes."""

    def __init__(self, number: int, command: str, process: Process, group: CommandGroup | None, limit: int) -> None:
        super().__init__(number, command, limit)
        self.process = process
        self.group = group

    async def follow(self) -> None:
        """Read the job's output until its pipe closes and wait for its shell; on a cancellation
        kill its group; reap it either way."""
        process = self.process
        with self.cancel:
            try:
                async with anyio.create_task_group() as tg:
                    assert process.stdout is not None  # start_command pipes it

                    async def read() -> None:
                        assert process.stdout is not None
                        async for chunk in process.stdout:
                            self.feed(chunk)

                    tg.start_soon(read)
                    self.ended(await process.wait())
            finally:
                await reap(process, kill=process.returncode is None)
                if self.group is not None:
                    self.group.exited()
                if process.returncode is not None:
                    self.ended(process.returncode)

    async def stop(self, grace_seconds: float) -> None:
        _signal(self.process, signal.SIGTERM)
        with anyio.move_on_after(grace_seconds):
            await self.end()
        if self.state == "running":
            _signal(self.process, signal.SIGKILL)
            with anyio.CancelScope(shield=True), anyio.move_on_after(grace_seconds):
                await self.end()

    async def pull(self) -> None:
        """Nothing to ask: the reader brings the output as it comes."""

    def close(self) -> None:
        if self.state == "running":
            _signal(self.process, signal.SIGKILL)
            self.state = "killed"
        self.cancel.cancel()


class TerminalJob(Job):
    """A job in an editor terminal (`CommandRunner.open_terminal`), embedded in its card. The
    terminal keeps the last `limit` bytes of the output; what the model has not read is what
    follows, in the terminal's output, the part it read last. The terminal is released when the
    job ends (its last output read first) or its session closes."""

    def __init__(self, number: int, command: str, terminal: JobTerminal, limit: int) -> None:
        super().__init__(number, command, limit)
        self.terminal = terminal
        self._held = ""
        """The terminal's output as of the last pull."""

    async def follow(self) -> None:
        """Wait for the command's exit, read its last output, release the terminal; a
        cancellation kills and releases it (shielded, bounded)."""
        with self.cancel:
            try:
                code = await self.terminal.wait()
                await self.pull()
                self.ended(code)
            except TerminalFailed as exc:
                log.warning("background %s: %s", self.id, exc)
                self.feed(f"\n[{exc}]\n".encode())
                self.state = "killed"
                self._wake()
            finally:
                await self.terminal.release()
        if self.state == "running":  # cancelled: the session closed or the server stops
            self.state = "killed"
            self._wake()

    async def pull(self) -> None:
        if self.state != "running":
            return  # the follower read the last output before it released the terminal
        try:
            held = await self.terminal.read()
        except TerminalFailed as exc:
            log.warning("background %s: %s", self.id, exc)
            return
        self.feed(_after(self._held, held.output).encode())
        self._held = held.output

    async def changed(self, seconds: float) -> None:
        """The terminal tells nothing until asked: ask it now, then every `POLL_SECONDS` until
        the job prints or ends, at most `seconds`."""
        await self.pull()
        with anyio.move_on_after(seconds):
            while self.state == "running" and not self._unread:
                with anyio.move_on_after(POLL_SECONDS):
                    await self._changed.wait()  # the end comes sooner
                await self.pull()

    async def stop(self, grace_seconds: float) -> None:
        try:
            await self.terminal.kill()
        except TerminalFailed as exc:
            log.warning("background %s: %s", self.id, exc)
            self.cancel.cancel()  # the release kills it
        with anyio.CancelScope(shield=True), anyio.move_on_after(grace_seconds):
            await self.end()

    def close(self) -> None:
        self.cancel.cancel()


def _after(held: str, output: str) -> str:
    """What `output` (a terminal's now) holds after `held` (its output when last read). A terminal
    that dropped the beginning since is matched by the end of `held`: output that repeats exactly
    may then be read again, never lost."""
    if output.startswith(held):
        return output[len(held) :]
    anchor = held[-ANCHOR_CHARS:]
    at = output.find(anchor)
    return output[at + len(anchor) :] if at >= 0 else output


class AgentJobs:
    """The jobs of one agent (its session)."""

    def __init__(self) -> None:
        self.jobs: dict[str, Job] = {}
        self.started = 0

    def running(self) -> int:
        return sum(job.state == "running" for job in self.jobs.values())

    def close(self) -> None:
        """End every job (the agent's session closes)."""
        for job in self.jobs.values():
            job.close()


class Jobs:
    """Every agent's background jobs (`ctx.get(JOBS)` starts them)."""

    def __init__(self, ctx: Context, *, max_running: int, max_output_bytes: int) -> None:
        self._ctx = ctx
        self.max_running = max_running
        self.max_output_bytes = max_output_bytes
        self._tables: dict[CallingAgent, AgentJobs] = {}

    def of(self, agent: CallingAgent) -> AgentJobs:
        table = self._tables.get(agent)
        if table is None:
            table = self._tables[agent] = AgentJobs()

            def close() -> None:
                closing = take(self._tables, agent)
                if closing is not None:
                    closing.close()

            agent.scope.add(close)
        return table

    async def start(self, command: str, call: ToolCallContext) -> ToolResult:
        """Start `command` as a job of the calling agent; answer its id and its first output."""
        table = self.of(call.agent)
        if table.running() >= self.max_running:
            return ToolResult.failure(texts.too_many_jobs(self.max_running), "too_many_jobs")
        group = call.ctx.get(PROCESSES).group(call.scope) if call.ctx.has(PROCESSES) else None
        number = table.started + 1
        job: Job
        try:
            # In the editor's terminal when the client has them: confined as a command there is,
            # and carrying the group's marker, so the session's end and the server's (however it
            # ends) find and end it as they end a local job.
            terminal = await runner_for(call).open_terminal(
                command, call=call, env=group.env if group is not None else {}, max_output_bytes=self.max_output_bytes
            )
            if terminal is not None:
                call.show(terminal_id=terminal.terminal_id)
                job = TerminalJob(number, command, terminal, self.max_output_bytes)
            else:
                process = await start_command(
                    command,
                    cwd=call.cwd,
                    env={**child_environment(call.ctx), **command_env(call)},
                    group=group,
                    prefix=sandbox_prefix(call),
                )
                job = LocalJob(number, command, process, group, self.max_output_bytes)
        except CommandNotStarted as exc:
            return ToolResult.failure(str(exc), "not_started")
        table.started = number
        table.jobs[job.id] = job
        self._ctx.tasks.start_soon(job.follow, name=f"job {job.id} of {call.route}")
        with anyio.move_on_after(FIRST_OUTPUT_SECONDS):
            await job.end()
        await job.pull()
        return ToolResult.text(texts.job_started(job.id, job.status(), job.take()))

    async def before_model_call(self, agent: CallingAgent) -> None:
        """Tell the model, in one line each, of the jobs that ended since it last looked."""
        table = self._tables.get(agent)
        if table is None:
            return
        for job in table.jobs.values():
            if job.state != "running" and not job.seen_end:
                job.seen_end = True
                line = texts.job_ended_notice(job.id, job.command, job.status())
                data = UserMessageData(content=[TextContent(text=line)], source=Source(kind=JOB_SOURCE))
                agent.session.append(UserMessageEvent, data)


def _signal(process: Process, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError):
        os.killpg(process.pid, sig)  # the group id is the shell's pid (start_new_session)


# --- the tools ------------------------------------------------------------------------------


class JobParams(ToolParams):
    """Arguments naming one job."""

    job_id: str = Field(description="The job's id, as bash answered it: `job-1`.")


class JobOutputParams(JobParams):
    wait_seconds: float = Field(
        default=0, ge=0, le=60, description="Wait up to this long for new output or the job's end first (at most 60)."
    )


class JobListParams(ToolParams):
    """No arguments."""


class _JobTool:
    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs

    def find(self, job_id: str, call: ToolCallContext) -> Job | ToolResult:
        job = self.jobs.of(call.agent).jobs.get(job_id)
        if job is None:
            return ToolResult.failure(texts.no_such_job(job_id), "no_such_job")
        return job


class JobOutputTool(_JobTool, Tool[JobOutputParams]):
    name = "job_output"
    description = texts.JOB_OUTPUT_DESCRIPTION
    Params = JobOutputParams
    concurrency_safe = True

    async def run(self, params: JobOutputParams, call: ToolCallContext) -> ToolResult:
        job = self.find(params.job_id, call)
        if isinstance(job, ToolResult):
            return job
        await job.changed(params.wait_seconds)
        return ToolResult.text(texts.job_read(job.status(), job.take()))

    def present(self, params: JobOutputParams) -> ToolPresentation:
        return ToolPresentation(title=f"Output of {params.job_id}", kind="read")

    def render_result(self, result: ToolResult) -> list[str]:
        return [code_block(result.plain_text(), "console")]


class JobKillTool(_JobTool, Tool[JobParams]):
    name = "job_kill"
    description = texts.JOB_KILL_DESCRIPTION
    Params = JobParams

    def __init__(self, jobs: Jobs, *, grace_seconds: float = 3.0) -> None:
        super().__init__(jobs)
        self.grace_seconds = grace_seconds

    async def run(self, params: JobParams, call: ToolCallContext) -> ToolResult:
        job = self.find(params.job_id, call)
        if isinstance(job, ToolResult):
            return job
        if job.state == "running":
            await job.stop(self.grace_seconds)
            job.state = "killed"
        job.seen_end = True
        await job.pull()
        return ToolResult.text(texts.job_read(job.status(), job.take()))

    def present(self, params: JobParams) -> ToolPresentation:
        return ToolPresentation(title=f"Stop {params.job_id}", kind="execute")


class JobListTool(_JobTool, Tool[JobListParams]):
    name = "job_list"
    description = texts.JOB_LIST_DESCRIPTION
    Params = JobListParams
    concurrency_safe = True

    async def run(self, params: JobListParams, call: ToolCallContext) -> ToolResult:
        jobs = self.jobs.of(call.agent).jobs.values()
        if not jobs:
            return ToolResult.text(texts.NO_JOBS)
        return ToolResult.text("\n".join(f"{job.status()}: {job.command}" for job in jobs))

    def present(self, params: JobListParams) -> ToolPresentation:
        return ToolPresentation(title="Background jobs", kind="read")


# The plugin: module attributes, as the loader expects.
name = "jobs"
inject = ("tools",)


class Config(PluginConfig):
    """Configuration of the `jobs` plugin row."""

    max_running: int = Field(default=8, gt=0)
    """Jobs running at once per session; one more start is refused."""
    max_output_bytes: int = Field(default=30000, gt=0)
    """Output a job keeps unread; older output is dropped (and counted)."""
    kill_grace_seconds: float = Field(default=3, gt=0)
    """How long job_kill waits after SIGTERM before it sends SIGKILL."""


def apply(ctx: Context, config: Config) -> Disposer:
    """Provide `ctx.get(JOBS)` (which `bash {run_in_background}` starts jobs with), register the
    job tools for every agent and the end-of-job notice before each model call."""
    jobs = Jobs(ctx, max_running=config.max_running, max_output_bytes=config.max_output_bytes)
    registry = ctx.get(TOOLS)
    return combine(
        ctx.provide(JOBS, jobs),
        *(
            registry.register(tool)
            for tool in (
                JobOutputTool(jobs),
                JobKillTool(jobs, grace_seconds=config.kill_grace_seconds),
                JobListTool(jobs),
            )
        ),
        ctx.events.on(BEFORE_MODEL_CALL, jobs.before_model_call),
    )
