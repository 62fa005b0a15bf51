"""An ACP child's `terminal/*` requests, run with the runner the parent's `bash` uses (here the
local one: the context provides no other)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.agent.keys import AGENTS
from acp_agent.kernel import Context
from acp_agent.permissions import Permissions, Policy
from acp_agent.permissions.service import PERMISSIONS
from acp_agent.sandbox.policy import READ_ONLY
from acp_agent.subagents.acp_client import Refused
from acp_agent.subagents.acp_files import WRITE, serve_fs
from acp_agent.subagents.acp_terminals import Terminals, thread_policy
from tests.unit.tools.helpers import call_context

pytestmark = pytest.mark.anyio


async def test_a_command_runs_to_its_end_in_the_cwd_with_its_env(tmp_path: Path) -> None:
    agent = call_context(cwd=tmp_path).agent
    (tmp_path / "sub").mkdir()
    async with anyio.create_task_group() as tasks:
        terminals = Terminals(agent, tasks)
        created = await terminals.serve(
            "terminal/create",
            {
                "command": "sh",
                "args": ["-c", "echo $GREETING; pwd; exit 3"],
                "env": [{"name": "GREETING", "value": "hi there"}],
                "cwd": "sub",
            },
        )
        terminal = {"terminalId": created["terminalId"]}
        assert await terminals.serve("terminal/wait_for_exit", terminal) == {"exitCode": 3, "signal": None}
        output = await terminals.serve("terminal/output", terminal)
        assert await terminals.serve("terminal/release", terminal) is None
    assert output == {
        "output": f"hi there\n{tmp_path / 'sub'}\n",
        "truncated": False,
        "exitStatus": {"exitCode": 3, "signal": None},
    }


async def test_a_killed_command_says_so_and_a_long_output_is_cut(tmp_path: Path) -> None:
    agent = call_context(cwd=tmp_path).agent
    async with anyio.create_task_group() as tasks:
        terminals = Terminals(agent, tasks)
        slow = {
            "terminalId": (await terminals.serve("terminal/create", {"command": "sleep", "args": ["30"]}))["terminalId"]
        }
        assert await terminals.serve("terminal/output", slow) == {"output": "", "truncated": False}
        assert await terminals.serve("terminal/kill", slow) is None
        assert await terminals.serve("terminal/wait_for_exit", slow) == {"exitCode": None, "signal": "SIGKILL"}
        loud = {"command": "sh", "args": ["-c", "yes | head -c 5000; kill -TERM $$"], "outputByteLimit": 1000}
        cut = {"terminalId": (await terminals.serve("terminal/create", loud))["terminalId"]}
        await terminals.serve("terminal/wait_for_exit", cut)
        output: dict[str, Any] = await terminals.serve("terminal/output", cut)
        left = {
            "terminalId": (await terminals.serve("terminal/create", {"command": "sleep", "args": ["30"]}))["terminalId"]
        }
        terminals.close()  # the prompt ended: what is left is killed
        assert (await terminals.serve("terminal/wait_for_exit", left))["signal"] == "SIGKILL"
    assert output["truncated"] is True
    assert output["exitStatus"] == {"exitCode": None, "signal": "SIGTERM"}


async def test_bad_requests_are_refused(tmp_path: Path) -> None:
    agent = call_context(cwd=tmp_path).agent
    async with anyio.create_task_group() as tasks:
        terminals = Terminals(agent, tasks)
        for method, params, code in [
            ("terminal/create", {"command": "ls", "cwd": "/"}, -32602),  # outside the thread's cwd
            ("terminal/create", {"args": []}, -32602),  # no command
            ("terminal/output", {"terminalId": "term-9"}, -32602),
            ("terminal/resize", {"terminalId": "term-9"}, -32602),
        ]:
            with pytest.raises(Refused) as caught:
                await terminals.serve(method, params)
            assert caught.value.code == code
        missing = {
            "terminalId": (await terminals.serve("terminal/create", {"command": "true", "cwd": "gone"}))["terminalId"]
        }
        assert await terminals.serve("terminal/wait_for_exit", missing) == {"exitCode": None, "signal": None}
        output = await terminals.serve("terminal/output", missing)
        with pytest.raises(Refused) as unknown:
            await terminals.serve("terminal/resize", missing)
    assert output["output"].startswith(f"the command did not start: the working directory {tmp_path / 'gone'}")
    assert unknown.value.code == -32601


async def test_the_parents_read_only_mode_confines_the_childs_commands_and_refuses_its_writes(tmp_path: Path) -> None:
    agent = call_context(cwd=tmp_path).agent

    class Agents:
        def get(self, session_id: str) -> None:
            return None  # its parent is gone: its own mode decides

    ctx = Context()
    agent.ctx = ctx
    ctx.provide(AGENTS, Agents())  # type: ignore[arg-type]
    assert thread_policy(agent) is None  # no permissions row: the runner's default
    ctx.provide(PERMISSIONS, Permissions(Policy(default="ask"), "plan"))
    assert thread_policy(agent) == READ_ONLY
    with pytest.raises(Refused) as refused:
        await serve_fs(agent, WRITE, {"path": "a.txt", "content": "x"})
    assert refused.value.message == "the thread is in Read-only mode: no file changes"
    async with anyio.create_task_group() as tasks:
        terminals = Terminals(agent, tasks)
        created = await terminals.serve("terminal/create", {"command": "touch", "args": ["made"]})
        await terminals.serve("terminal/wait_for_exit", created)
        output = await terminals.serve("terminal/output", created)
    # No sandbox is composed here: a confined command fails closed instead of running unconfined.
    assert "sandbox" in output["output"]
    assert not (tmp_path / "made").exists()
