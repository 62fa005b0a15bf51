"""Background jobs on real processes: a start answers with the id and the first output, reads
take what is new, a kill ends the group, closing the agent's session ends what runs, and the
model is told once of a job that ended unread. No assertion depends on how fast a job runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from acp_agent.kernel import Context
from acp_agent.session.events import UserMessageEvent
from acp_agent.tools import BashParams, BashTool, ToolCallContext
from acp_agent.tools.jobs import (
    JOB_SOURCE,
    JobKillTool,
    JobListParams,
    JobListTool,
    JobOutputParams,
    JobOutputTool,
    JobParams,
    Jobs,
)

from .helpers import logged_call

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ctx() -> AsyncIterator[Context]:
    context = Context()
    async with context.running():
        yield context


def make_call(ctx: Context, cwd: Path) -> ToolCallContext:
    call = logged_call(cwd)
    call.agent.ctx = ctx
    return call


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


class Kit:
    def __init__(self, ctx: Context, cwd: Path, **limits: int) -> None:
        self.jobs = Jobs(
            ctx, max_running=limits.get("max_running", 8), max_output_bytes=limits.get("max_output_bytes", 30000)
        )
        self.call = make_call(ctx, cwd)

    async def start(self, command: str) -> str:
        return (await self.jobs.start(command, self.call)).plain_text()

    async def read(self, job_id: str = "job-1", wait: float = 0) -> str:
        return (
            await JobOutputTool(self.jobs).run(JobOutputParams(job_id=job_id, wait_seconds=wait), self.call)
        ).plain_text()

    async def until_end(self, job_id: str = "job-1") -> str:
        """Everything the job prints from now on, read until it has ended."""
        text = ""
        while True:
            got = await self.read(job_id, wait=60)
            status, _, output = got.partition("\n")
            text += "" if output == "(no new output)" else output
            if "running" not in status:
                return status + "|" + text


async def test_a_job_answers_its_id_and_first_output_and_reads_take_what_is_new(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path)
    started = await kit.start("echo one; sleep 0.5; echo two; exit 3")
    assert started.startswith("Started job-1 in the background; job-1 ")
    first = started.partition("\n")[2]
    rest = await kit.until_end()
    status, _, later = rest.partition("|")
    assert status == "job-1 exited with code 3." or "exited with code 3" in started
    assert (("" if first == "(no new output)" else first) + later) == "one\ntwo\n"
    assert await kit.read() in ("job-1 exited with code 3.\n(no new output)",)


async def test_kill_ends_the_group_and_answers_the_final_state(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path)
    await kit.start("sleep 30 & echo $! > child.pid; wait")
    while not (tmp_path / "child.pid").read_text() if (tmp_path / "child.pid").exists() else True:
        await anyio.sleep(0.01)
    child = int((tmp_path / "child.pid").read_text())
    killed = await JobKillTool(kit.jobs).run(JobParams(job_id="job-1"), kit.call)
    assert killed.plain_text() == "job-1 was killed.\n(no new output)"
    with anyio.fail_after(10):  # the signal reached it; it ends as the kernel gets to it
        while alive(child):
            await anyio.sleep(0.01)
    listed = await JobListTool(kit.jobs).run(JobListParams(), kit.call)
    assert listed.plain_text() == "job-1 was killed: sleep 30 & echo $! > child.pid; wait"


async def test_a_job_that_ignores_sigterm_is_killed_after_the_grace(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path)
    seen = await kit.start("trap '' TERM; echo ready; sleep 30")
    while "ready" not in seen:
        seen = await kit.read(wait=60)
    killed = await JobKillTool(kit.jobs, grace_seconds=0.2).run(JobParams(job_id="job-1"), kit.call)
    assert killed.plain_text() == "job-1 was killed.\n(no new output)"


async def test_the_ninth_job_is_refused_and_unknown_ids_are_errors(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path, max_running=1)
    await kit.start("sleep 30")
    refused = await kit.jobs.start("sleep 30", kit.call)
    assert refused.error is not None and refused.error.code == "too_many_jobs"
    assert refused.plain_text() == "Error: 1 background jobs are running already: stop one with job_kill first"
    assert await kit.read("job-9") == "Error: there is no background job job-9 in this session (job_list lists them)"
    assert (
        await JobListTool(kit.jobs).run(JobListParams(), make_call(ctx, tmp_path))
    ).plain_text() == "No background jobs in this session."


async def test_output_beyond_the_limit_drops_the_oldest_with_a_note(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path, max_output_bytes=100)
    started = await kit.start("seq 1000 | tr -d '\\n'; echo; echo end")
    text = started.partition("\n")[2] + "\n" + (await kit.until_end()).partition("|")[2]
    assert text.startswith("[... ") and "bytes of older output dropped ...]\n" in text
    assert text.rstrip("\n").endswith("1000\nend")


async def test_closing_the_session_ends_its_jobs(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path)
    await kit.start("echo $$ > job.pid; exec sleep 30")
    while not (tmp_path / "job.pid").exists() or not (tmp_path / "job.pid").read_text().strip():
        await anyio.sleep(0.01)
    pid = int((tmp_path / "job.pid").read_text())
    kit.call.scope.dispose()
    with anyio.fail_after(10):
        while alive(pid):
            await anyio.sleep(0.01)


async def test_the_model_is_told_once_of_a_job_that_ended_unread(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path)
    command = "until [ -e go ]; do sleep 0.01; done; echo done"
    assert "job-1 is running" in await kit.start(command)  # it waits for `go`
    (tmp_path / "go").touch()
    await kit.jobs.of(kit.call.agent).jobs["job-1"].end()
    await kit.jobs.before_model_call(kit.call.agent)
    await kit.jobs.before_model_call(kit.call.agent)
    told = [e for e in kit.call.session.events if isinstance(e, UserMessageEvent)]
    assert [(e.data.source.kind, e.data.content[0].text) for e in told] == [  # type: ignore[union-attr]
        (
            JOB_SOURCE,
            f"[background job: job-1 exited with code 0: {command}; job_output job-1 reads what it printed last]",
        )
    ]
    await kit.start("exit 1")
    await kit.read("job-2", wait=60)  # read after it ended (or it ended during the start): seen
    await kit.jobs.before_model_call(kit.call.agent)
    assert len([e for e in kit.call.session.events if isinstance(e, UserMessageEvent)]) == 1


async def test_bash_starts_jobs_only_where_the_service_is(ctx: Context, tmp_path: Path) -> None:
    call = make_call(ctx, tmp_path)
    refused = await BashTool().run(BashParams(command="true", run_in_background=True), call)
    assert (
        refused.plain_text()
        == "Error: background jobs are not available here: run the command without run_in_background"
    )


async def test_a_job_whose_directory_is_gone_does_not_start(ctx: Context, tmp_path: Path) -> None:
    kit = Kit(ctx, tmp_path / "gone")
    refused = await kit.jobs.start("true", kit.call)
    assert refused.error is not None and refused.error.code == "not_started"
    assert kit.jobs.of(kit.call.agent).jobs == {}
