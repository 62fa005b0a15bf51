"""Run a scenario against the real server: spawn it, drive the steps, capture everything.

The server runs as a subprocess (`python -m acp_agent --config <config>`) with the scenario
directory as its replay fixtures, a copy of the scenario's `workspace/` as the session cwd and a
fresh sessions directory, so a run sees exactly what an editor would and leaves no trace behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from acp_agent.config_dir import ENV_CONFIG
from acp_agent.llm.replay import PRESEEDED
from acp_agent.snapshot import fixtures
from acp_agent.snapshot.client import Client
from acp_agent.snapshot.client_fs import FileServer
from acp_agent.snapshot.client_terminal import open_terminals
from acp_agent.snapshot.driver import Driver
from acp_agent.snapshot.frames import encode
from acp_agent.snapshot.mcp_servers import serving
from acp_agent.snapshot.normalize import CWD, map_strings
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.scenario import CONFIG, ROOTS, ROWS, WORKSPACE, load_scenario

SNAPSHOT_CONFIG = "cordis.snapshot.yml"
RECORD_CONFIG = "cordis.record.yml"
STEP_TIMEOUT = 20.0
"""Seconds a step may wait for its answer, and the server for its exit once stdin is closed.
Replayed steps take milliseconds: reaching this means something hangs."""
REPLAY_PROBLEM = "replay: "
PERMISSIONS_VARIABLE = "ACP_AGENT_PERMISSIONS"
"""The permissions row's default rule in the snapshot and record configs (input.json's
`permissionPolicy`)."""
SANDBOX_VARIABLE = "ACP_AGENT_SANDBOX"
"""The sandbox row's backend in the snapshot and record configs (input.json's `sandbox`)."""
PYTHON_VARIABLE = "ACP_AGENT_SNAPSHOT_PYTHON"
COMPOSITION_VARIABLE = "ACP_AGENT_SNAPSHOT_CONFIG"
"""The interpreter and the composition the run's server was started with (without the scenario's
rows): what a scenario's rows start this server again with, as an ACP child."""
CWD_VARIABLE = "ACP_AGENT_SNAPSHOT_CWD"
WORKDIR_VARIABLE = "ACP_AGENT_SNAPSHOT_WORKDIR"
"""The run's cwd and the directory it is in: what the replay and scripted models stream for
`{{cwd}}` and `{{workdir}}` (the snapshot and record configs' `places`)."""


def packaged(name: str) -> Path:
    """A file or directory shipped in the package (a loader config, the demo scenario)."""
    return Path(str(resources.files("acp_agent") / name))


async def run_scenario(
    directory: Path,
    workdir: Path,
    *,
    config: Path | None = None,
    jitter: int | None = None,
    env: Mapping[str, str] | None = None,
    server: Sequence[str] | None = None,
    timeout: float = STEP_TIMEOUT,
    check_fixtures: bool = True,
    child_sessions: bool | None = None,
) -> RunResult:
    """Run the scenario in `directory`, working under `workdir` (an empty directory the caller
    owns and removes). `server` replaces the whole server command (tests use a fake server).
    `check_fixtures`: hold each route's prompts against its replayed fixture (`fixtures.py`);
    off when the run records new fixtures. `child_sessions`: advertise `subagents` (True) or not
    (False) whatever the scenario's `clientCapabilities` say (None: as they say)."""
    scenario = load_scenario(directory)
    directory, workdir = directory.resolve(), workdir.resolve()
    cwd, sessions, user_config = workdir / "cwd", workdir / "sessions", workdir / "config"
    for source, target in ((directory / WORKSPACE, cwd), (directory / CONFIG, user_config)):
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            target.mkdir()
    if (directory / ROOTS).is_dir():
        shutil.copytree(directory / ROOTS, workdir / ROOTS, symlinks=True)
    if scenario.repository:
        (cwd / ".git").mkdir()
    sessions.mkdir()
    preseed(directory / PRESEEDED, sessions, cwd)
    base = (config or packaged(SNAPSHOT_CONFIG)).resolve()
    command = server or [sys.executable, "-m", "acp_agent", "--config", str(composition(directory, workdir, base))]
    # The user's own configuration (command files, AGENTS.md) never reaches a run: it gets the
    # scenario's, or an empty directory.
    child_env = {
        **os.environ,
        "ACP_AGENT_FIXTURES": str(directory),
        "ACP_AGENT_SESSIONS": str(sessions),
        ENV_CONFIG: str(user_config),
        PYTHON_VARIABLE: sys.executable,
        COMPOSITION_VARIABLE: str(base),
        CWD_VARIABLE: str(cwd),
        WORKDIR_VARIABLE: str(workdir),
    }
    # The scenario's permission policy and sandbox, never the caller's environment's (a snapshot
    # must not depend on the shell it runs in).
    for variable, value in ((PERMISSIONS_VARIABLE, scenario.permission_policy), (SANDBOX_VARIABLE, scenario.sandbox)):
        child_env.pop(variable, None)
        if value is not None:
            child_env[variable] = value
    child_env.update(env or {})
    if jitter is not None:
        child_env["ACP_AGENT_REPLAY_JITTER"] = str(jitter)
    stderr = bytearray()
    async with (
        serving(directory, scenario) as mcp_servers,
        await anyio.open_process(list(command), env=child_env) as process,
        open_terminals(cwd) as terminals,
    ):
        assert process.stdin and process.stdout and process.stderr  # all three are pipes
        capabilities = scenario.client_capabilities
        if child_sessions is not None:
            capabilities = capabilities.model_copy(update={"subagents": {} if child_sessions else None})
        client = Client(
            process.stdin,
            scenario.permissions,
            elicitations=scenario.elicitations,
            capabilities=capabilities,
            files=FileServer(cwd),
            terminals=terminals,
        )
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(client.read, process.stdout)
            tasks.start_soon(_collect, process.stderr, stderr)
            failures = await Driver(client, cwd, timeout, mcp_servers, sessions).run(scenario.steps)
            await process.stdin.aclose()  # EOF: the server cancels what runs, flushes logs, exits
            failures += await _wait_exit(process, timeout)
        failures += terminals.unreleased()
    stderr_text = stderr.decode("utf-8", errors="replace")
    logs, log_problems = read_logs(sessions)
    failures += client.failures + client.leftovers() + log_problems
    failures += [f"server stderr: {line}" for line in stderr_text.splitlines() if REPLAY_PROBLEM in line]
    if check_fixtures:
        failures += fixtures.check_fixtures(directory, logs, cwd)
    return RunResult(
        client.stdout,
        stderr_text,
        logs,
        cwd,
        client.sent,
        process.returncode,
        failures,
        user_config,
        directory,
        client.sent_after,
    )


def composition(directory: Path, workdir: Path, base: Path) -> Path:
    """The run's loader config: `base`, then the scenario's own rows (`cordis.yml`) if it has any.
    The rows are written in the same file after the include, not included themselves, so a row
    naming a row of `base` by its id changes it (the model row's prices, say)."""
    rows = directory / ROWS
    if not rows.is_file():
        return base
    composed = workdir / ROWS
    # JSON strings are YAML strings: any path is quoted right.
    own = rows.read_text(encoding="utf-8")
    composed.write_text(f"- include: {json.dumps(str(base))}\n{own}", encoding="utf-8")
    return composed


def preseed(source: Path, sessions: Path, cwd: Path) -> None:
    """Store the scenario's `sessions/<id>/session.jsonl` logs (sessions of an earlier run, for
    a `loadSession` step) in the run's sessions directory, `{{cwd}}` becoming the run's cwd."""
    for path in sorted(source.glob("*/session.jsonl")):
        target = sessions / path.parent.name / path.name
        target.parent.mkdir()
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        stored = (encode(map_strings(line, lambda text: text.replace(CWD, str(cwd)))) for line in lines)
        target.write_text("".join(line + "\n" for line in stored), encoding="utf-8")


async def _collect(stream: ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        into += chunk


async def _wait_exit(process: Process, timeout: float) -> list[str]:
    with anyio.move_on_after(timeout):
        code = await process.wait()
        return [f"the server exited with code {code}"] if code else []
    process.kill()
    await process.wait()
    return [f"the server did not exit within {timeout:g} s of its stdin closing (killed)"]


def read_logs(sessions: Path) -> tuple[dict[str, list[Any]], list[str]]:
    """Every `<sessions>/*/session.jsonl`, parsed, keyed by its header's route, in route order;
    and the lines that are not JSON (a log the server left torn)."""
    logs: dict[str, list[Any]] = {}
    problems = []
    for path in sorted(sessions.glob("*/session.jsonl")):
        lines = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                lines.append(json.loads(line))
            except ValueError:
                problems.append(f"session log {path.parent.name} line {number} is not JSON: {line[:200]!r}")
        header = lines[0] if lines and isinstance(lines[0], dict) else {}
        logs[header.get("route") or path.parent.name] = lines
    return {route: logs[route] for route in sorted(logs, key=route_key)}, problems


def route_key(route: str) -> tuple[tuple[str | int, ...], ...]:
    """Routes in natural order, segment by segment: s2 before s10, a parent before its children."""
    return tuple(
        tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", segment))
        for segment in route.split("/")
    )
