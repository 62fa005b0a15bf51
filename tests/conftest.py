from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from acp_agent.agent.titles import ENV_TITLES
from acp_agent.config_dir import ENV_CONFIG
from tests.paths import UPSTREAM
from tests.runs import ScenarioRuns


@pytest.fixture(scope="session", autouse=True)
def empty_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every server a test starts reads an empty user configuration directory (no command files,
    no AGENTS.md, no stored API keys), so a developer's own files never change a test; the
    snapshot runner gives each run its own (the scenario's `config/`, or an empty one)."""
    previous = {name: os.environ.get(name) for name in (ENV_CONFIG, ENV_TITLES)}
    os.environ[ENV_CONFIG] = str(tmp_path_factory.mktemp("user-config"))
    # No title call after a first turn: the fake endpoints answer the calls each test expects
    # (tests/e2e/test_titles.py turns it on).
    os.environ[ENV_TITLES] = "false"
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session", autouse=True)
def empty_user_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every server a test starts has an empty home directory, so the developer's own Claude Code
    and Codex files (`~/.claude/settings.json`, `~/.codex/hooks.json`: hooks, skills) never
    change a test."""
    previous = os.environ.get("HOME")
    os.environ["HOME"] = str(tmp_path_factory.mktemp("user-home"))
    yield
    if previous is None:
        os.environ.pop("HOME", None)
    else:
        os.environ["HOME"] = previous


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def scenario_run(tmp_path_factory: pytest.TempPathFactory) -> ScenarioRuns:
    """The test session's scenario runs (`tests/runs.py`): each scenario and mode runs once."""
    return ScenarioRuns(tmp_path_factory)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say why the replays of the upstream scenarios were skipped: they read data that stays
    outside the repository (every other test needs nothing beside it)."""
    if not UPSTREAM.is_dir():
        skipped = [r for r in terminalreporter.stats.get("skipped", []) if "upstream" in str(r.longrepr)]
        terminalreporter.write_line(
            f"{len(skipped)} skipped: the TypeScript original's recorded scenarios ({UPSTREAM}) are absent;"
            " the tests that replay them need that folder beside the repository"
        )
