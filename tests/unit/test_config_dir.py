"""The user's config directory: the variable, then XDG, then ~/.config."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.config_dir import config_dir


def test_the_variable_wins() -> None:
    assert config_dir({"ACP_AGENT_CONFIG": "/x/y", "XDG_CONFIG_HOME": "/xdg"}) == Path("/x/y")


def test_xdg_config_home_next() -> None:
    assert config_dir({"XDG_CONFIG_HOME": "/xdg"}) == Path("/xdg/acp-agent")


def test_home_config_last(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_dir({}) == tmp_path / ".config" / "acp-agent"


def test_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_AGENT_CONFIG", "/from/env")
    assert config_dir() == Path("/from/env")
