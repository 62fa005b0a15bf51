"""Background jobs in the editor's terminal: the real `TerminalRunner` against the harness
client's terminals (`acp_agent.snapshot.client_terminal`, real processes). A job's card embeds
its terminal, reads take what is new, the terminal is released when the job ends, is killed, or
its session closes; a terminal that drops its beginning, and an editor that fails, lose nothing
the model would miss unsaid. No assertion depends on how fast a job runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.acp.client_terminal import TerminalRunner
from acp_agent.acp.errors import ClientError
from acp_agent.kernel import Context
from acp_agent.snapshot.client_fs import RequestFailed
from acp_agent.snapshot.client_terminal import Terminals, open_terminals
from acp_agent.tools import RUNNER_SERVICE, ToolCallContext
from acp_agent.tools import jobs as jobs_module
from acp_agent.tools.jobs import JobKillTool, JobOutputParams, JobOutputTool, JobParams, Jobs

from ..tools.helpers import logged, logged_call
from ..tools.test_jobs import alive

pytestmark = pytest.mark.anyio

LINES = "".join(f"{n:03}\n" for n in range(200))
REPEATED = "abc\n" * 250


class Loopback:
    """The connection the runner asks: each request answered by the harness client's terminals;
    a method named in `failing` answers an error."""

    def __init__(self, terminals: Terminals) -> None:
        self.terminals = terminals
        self.failing: set[str] = set()
        self.methods: list[str] = []

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.methods.append(method)
        if method in self.failing:
            raise ClientError(-32603, "the editor is gone")
        try:
            return await self.terminals.handle(method, params)
        except RequestFailed as exc:
            raise ClientError(exc.code, exc.message) from None


class Kit:
    def __init__(self, ctx: Context, cwd: Path, conn: Loopback, limit: int = 30000) -> None:
        self.conn = conn
        self.jobs = Jobs(ctx, max_running=8, max_output_bytes=limit)
        self.call: ToolCallContext = logged_call(cwd)
        self.call.agent.ctx = ctx
        runner = TerminalRunner(conn, "wire-session")  # type: ignore[arg-type]
        ctx.provide(RUNNER_SERVICE, lambda call: runner)

    async def start(self, command: str) -> str:
        return (await self.jobs.start(command, self.call)).plain_text()

    async def read(self, job_id: str = "job-1", wait: float = 0) -> str:
        params = JobOutputParams(job_id=job_id, wait_seconds=wait)
        return (await JobOutputTool(self.jobs).run(params, self.call)).plain_text()

    async def until_end(self) -> str:
        """What the job prints from now on, read until it has ended: its status line, then that."""
        printed = ""
        while True:
            status, _, output = (await self.read(wait=60)).partition("\n")
            printed += "" if output == "(no new output)" else output
            if "running" not in status:
                return f"{status}|{printed}"


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    context = Context()
    async with context.running(), open_terminals(tmp_path) as terminals:
        yield Kit(context, tmp_path, Loopback(terminals))


async def test_a_job_runs_in_a_terminal_shown_on_its_card_and_released_when_it_ends(kit: Kit, tmp_path: Path) -> None:
    started = await kit.start("echo one; until [ -e go ]; do sleep 0.01; done; echo two; exit 3")
    assert started.startswith("Started job-1 in the background; job-1 is running.\n")
    [shown] = logged(kit.call, "tool/display")
    assert shown.terminal_id in kit.conn.terminals.terminals
    (tmp_path / "go").touch()
    status, _, later = (await kit.until_end()).partition("|")
    assert status == "job-1 exited with code 3."
    first = started.partition("\n")[2]
    assert ("" if first == "(no new output)" else first) + later == "one\ntwo\n"
    assert kit.conn.terminals.terminals == {}  # released once its last output was read
    assert await kit.read() == "job-1 exited with code 3.\n(no new output)"


async def test_a_kill_ends_the_terminals_command_and_a_closed_session_releases_what_runs(
    kit: Kit, tmp_path: Path
) -> None:
    await kit.start("echo $$ > one.pid; exec sleep 60")
    with anyio.fail_after(10):
        while not (tmp_path / "one.pid").exists() or not (tmp_path / "one.pid").read_text().strip():
            await anyio.sleep(0.01)
    killed = await JobKillTool(kit.jobs).run(JobParams(job_id="job-1"), kit.call)
    assert killed.plain_text().startswith("job-1 was killed.\n")
    assert not alive(int((tmp_path / "one.pid").read_text()))
    await kit.start("echo $$ > two.pid; exec sleep 60")
    with anyio.fail_after(10):
        while not (tmp_path / "two.pid").exists() or not (tmp_path / "two.pid").read_text().strip():
            await anyio.sleep(0.01)
    pid = int((tmp_path / "two.pid").read_text())
    kit.call.scope.dispose()
    with anyio.fail_after(10):
        while kit.conn.terminals.terminals:
            await anyio.sleep(0.01)
    assert not alive(pid)
    assert kit.conn.methods.count("terminal/release") == 2


async def test_an_editor_that_fails_ends_the_job_with_the_reason(kit: Kit) -> None:
    kit.conn.failing = {"terminal/wait_for_exit", "terminal/output"}
    started = await kit.start("sleep 60")
    assert started.startswith("Started job-1 in the background; job-1 was killed.\n")
    assert "terminal/wait_for_exit answered error -32603: the editor is gone]" in started
    assert kit.conn.terminals.terminals == {}  # killed and released all the same
    kit.conn.failing = {"terminal/output"}
    await kit.start("exit 4")  # its output cannot be read; its end can
    assert (await kit.read("job-2", wait=60)).startswith("job-2 exited with code 4.\n")


async def test_a_kill_the_editor_refuses_releases_the_terminal(kit: Kit) -> None:
    kit.conn.failing = {"terminal/kill"}
    await kit.start("exec sleep 60")
    killed = await JobKillTool(kit.jobs).run(JobParams(job_id="job-1"), kit.call)
    assert killed.plain_text().startswith("job-1 was killed.")
    assert kit.conn.terminals.terminals == {}


@pytest.mark.parametrize(
    ("held", "output", "new"),
    [
        ("", "abc", "abc"),
        ("abc", "abcdef", "def"),
        ("abcdef", "defghi", "defghi"),  # it dropped "abc": too little left to be sure, read again
        ("abc", "xyz", "xyz"),  # it dropped all that was read and more: all it holds is new
        # It dropped the first 300 characters: what was read is found by its last ANCHOR_CHARS.
        (LINES[:600], LINES[300:700], LINES[600:700]),
        # Output that repeats: its first place is taken, so some is read again, none is lost.
        (REPEATED, REPEATED[100:] + "new\n", REPEATED[100 + 256 :] + "new\n"),
    ],
)
def test_what_a_terminal_holds_after_the_last_read(held: str, output: str, new: str) -> None:
    assert jobs_module._after(held, output) == new
