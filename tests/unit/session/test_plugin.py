from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.kernel.context import Context
from acp_agent.session import SessionStore
from acp_agent.session.persistence import SESSIONS
from acp_agent.session.plugin import ENV_DIR, Config, apply, sessions_dir
from tests.unit.session.builders import new_session, start_turn


@pytest.fixture(autouse=True)
def no_session_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)


def test_the_environment_wins_over_the_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "env"))
    assert sessions_dir(Config(dir=str(tmp_path / "config"))) == tmp_path / "env"


def test_the_config_dir_expands_the_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert sessions_dir(Config(dir="~/logs")) == tmp_path / "logs"


def test_the_state_directory_is_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert sessions_dir(Config()) == tmp_path / "home" / ".local" / "state" / "acp-agent" / "sessions"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert sessions_dir(Config()) == tmp_path / "state" / "acp-agent" / "sessions"


def test_apply_provides_the_store_and_disposing_closes_it(tmp_path: Path) -> None:
    ctx = Context()
    dispose = apply(ctx, Config(dir=str(tmp_path)))
    store = ctx.get(SESSIONS)
    assert isinstance(store, SessionStore)
    assert store.root == tmp_path
    session = new_session(registry=store.registry)  # the core types are registered
    store.attach(session)
    start_turn(session)
    dispose()
    assert not ctx.has(SESSIONS)
    # Closing flushed the open turn.
    assert len(store.path_of(session.id).read_text(encoding="utf-8").splitlines()) == 3
