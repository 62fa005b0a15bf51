"""Scenario runs shared by the whole test session: the snapshot tests and the conformance checks
read the same run of a scenario in a mode instead of each starting its own server for it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TypeVar

import anyio
import pytest

from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.runner import run_scenario
from acp_agent.snapshot.scenario import load_scenario

Key = tuple[Path, bool]
"""A run: the scenario directory (resolved), and whether the client takes child sessions."""
K = TypeVar("K")


def side_by_side(runs: Mapping[K, Callable[[], Awaitable[RunResult]]], at_once: int) -> dict[K, RunResult]:
    """Each of `runs` run, `at_once` servers at a time; their results by key."""
    results: dict[K, RunResult] = {}

    async def run_all() -> None:
        limiter = anyio.CapacityLimiter(at_once)

        async def one(key: K, run: Callable[[], Awaitable[RunResult]]) -> None:
            async with limiter:
                results[key] = await run()

        async with anyio.create_task_group() as tasks:
            for key, run in runs.items():
                tasks.start_soon(one, key, run)

    anyio.run(run_all)
    return results


class ScenarioRuns:
    """Runs a scenario directory through the real server once per test session and mode, in
    process so the harness is measured by coverage. `child_sessions`: the client advertises
    `subagents` (True), does not (False), or as input.json says (None)."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp = tmp_path_factory
        self._runs: dict[Key, RunResult] = {}

    def __call__(self, directory: Path, child_sessions: bool | None = None) -> RunResult:
        key = _key(directory, child_sessions)
        if key not in self._runs:
            self._runs[key] = anyio.run(self._run, key)
        return self._runs[key]

    def prefetch(self, wanted: Iterable[tuple[Path, bool | None]], at_once: int) -> None:
        """Run those of `wanted` not run yet side by side, `at_once` servers at a time."""
        missing = sorted({_key(directory, child_sessions) for directory, child_sessions in wanted} - self._runs.keys())
        self._runs.update(side_by_side({key: partial(self._run, key) for key in missing}, at_once))

    async def _run(self, key: Key) -> RunResult:
        directory, child_sessions = key
        workdir = self._tmp.mktemp(directory.name)
        return await run_scenario(directory, workdir, child_sessions=child_sessions)


def _key(directory: Path, child_sessions: bool | None) -> Key:
    if child_sessions is None:
        child_sessions = load_scenario(directory).client_capabilities.subagents is not None
    return directory.resolve(), child_sessions
