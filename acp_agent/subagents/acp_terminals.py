"""An ACP child's `terminal/*` requests, served with the runner the parent's `bash` uses.

Each `terminal/create` runs its command (`command` and `args`, shell-quoted; `env` as assignments
before it) to its end through `tools.bash.runner_for` of the stand-in (the editor's terminal when
it offers one, else a local process group with the server's environment less its credentials),
in the `cwd` it names, which must lie inside the thread's cwd, confined as the parent's mode
confines its own commands (`thread_policy`). The runner has no partial output:
`terminal/output` says nothing until the command ended, then its whole output (cut in the middle
past `outputByteLimit`, as `bash` cuts) and exit status; `terminal/wait_for_exit` waits for that
end; `terminal/kill` and `terminal/release` cancel the command (the runner kills its group). The
commands run in the prompt's task group: every terminal ends with the prompt that opened it.
"""

from __future__ import annotations

import shlex
import signal
from itertools import count
from pathlib import Path
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from acp_agent.agent.agent import Agent
from acp_agent.agent.keys import AGENTS
from acp_agent.permissions.modes import SANDBOX_OF
from acp_agent.permissions.service import PERMISSIONS
from acp_agent.sandbox.policy import Kind
from acp_agent.subagents.acp_client import Refused
from acp_agent.tools import confined
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.bash import runner_for
from acp_agent.tools.errors import CommandNotStarted, OutsideWorkspace
from acp_agent.tools.runner import CommandOutcome

PREFIX: Final = "terminal/"
DEFAULT_OUTPUT_BYTES = 1_000_000
TIMEOUT_SECONDS = 24 * 3600.0
"""A terminal runs until it ends or is killed: the runner's timeout is only a backstop."""


def thread_policy(agent: Agent) -> Kind | None:
    """How the parent's mode confines commands (`permissions.modes.SANDBOX_OF`): read-only in
    *Read-only*, workspace-write in *Ask* and *Auto*, none in *Full access*; None without a
    permissions row (`tools.sandboxing.policy_kind` then decides)."""
    permissions = agent.ctx.find(PERMISSIONS)
    if permissions is None:
        return None
    parent = agent.ctx.get(AGENTS).get(agent.session.header.parent_session or "")
    return SANDBOX_OF.get(permissions.mode(parent or agent))


class _Terminal:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.scope = anyio.CancelScope()
        self.ended = anyio.Event()
        self.outcome: CommandOutcome | None = None
        self.failure: str | None = None


class Terminals:
    """The terminals one prompt of an ACP child opened."""

    def __init__(self, agent: Agent, tasks: TaskGroup) -> None:
        self._agent = agent
        self._tasks = tasks
        self._open: dict[str, _Terminal] = {}
        self._ids = count(1)

    async def serve(self, method: str, params: dict[str, Any]) -> Any:
        if method == "terminal/create":
            return self._create(params)
        terminal = self._open.get(str(params.get("terminalId")))
        if terminal is None:
            raise Refused(-32602, f"no terminal {params.get('terminalId')!r}")
        if method == "terminal/output":
            return _output(terminal)
        if method == "terminal/wait_for_exit":
            await terminal.ended.wait()
            return _exit_status(terminal)
        if method in ("terminal/kill", "terminal/release"):
            terminal.scope.cancel()
            if method == "terminal/release":
                del self._open[str(params["terminalId"])]
            return None
        raise Refused(-32601, f"Method not found: {method}")

    def close(self) -> None:
        """End every terminal still running (the prompt is over)."""
        for terminal in self._open.values():
            terminal.scope.cancel()

    def _create(self, params: dict[str, Any]) -> dict[str, Any]:
        base = Path(self._agent.session.cwd or ".")
        try:
            cwd = confined.resolve_in(base, str(params.get("cwd") or base)).path
            argv = [str(params["command"]), *(str(arg) for arg in params.get("args") or [])]
            assignments = [f"{item['name']}={shlex.quote(str(item['value']))}" for item in params.get("env") or []]
        except (OutsideWorkspace, KeyError, TypeError) as exc:
            raise Refused(-32602, f"terminal/create: {exc}") from exc
        limit = params.get("outputByteLimit")
        limit = limit if isinstance(limit, int) and limit > 0 else DEFAULT_OUTPUT_BYTES
        command = " ".join([*assignments, shlex.join(argv)])
        terminal_id = f"term-{next(self._ids)}"
        terminal = self._open[terminal_id] = _Terminal(limit)
        call = ToolCallContext(call_id=terminal_id, cwd=cwd, agent=self._agent, sandbox=thread_policy(self._agent))
        self._tasks.start_soon(_run, terminal, command, call)
        return {"terminalId": terminal_id}


async def _run(terminal: _Terminal, command: str, call: ToolCallContext) -> None:
    try:
        with terminal.scope:
            terminal.outcome = await runner_for(call).run(
                command, call=call, timeout_seconds=TIMEOUT_SECONDS, max_output_bytes=terminal.limit
            )
    except CommandNotStarted as exc:
        terminal.failure = str(exc)
    finally:
        terminal.ended.set()


def _exit_status(terminal: _Terminal) -> dict[str, Any]:
    outcome = terminal.outcome
    if outcome is None:  # killed, or it never started
        return {"exitCode": None, "signal": "SIGKILL" if terminal.failure is None else None}
    if outcome.exit_code >= 0:
        return {"exitCode": outcome.exit_code, "signal": None}
    return {"exitCode": None, "signal": outcome.signal or signal.Signals(-outcome.exit_code).name}


def _output(terminal: _Terminal) -> dict[str, Any]:
    if not terminal.ended.is_set():
        return {"output": "", "truncated": False}
    text = terminal.outcome.output if terminal.outcome is not None else terminal.failure or ""
    truncated = len(text.encode()) > terminal.limit  # the runner cut its middle (and said so)
    return {"output": text, "truncated": truncated, "exitStatus": _exit_status(terminal)}
