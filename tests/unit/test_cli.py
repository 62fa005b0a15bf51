"""The `acp-agent` command line: `demo` runs the keyless demo, `--help`, `--version` (serving is
covered end to end, on every kind of stdin in `tests/e2e/test_stdin.py`)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

import acp_agent
from acp_agent.cli import main
from acp_agent.credentials import CredentialStore
from tests.paths import ROOT


def test_demo_subcommand_replays_the_bundled_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "stop reason: end_turn" in out


def test_help_lists_the_subcommands_one_line_each(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out.splitlines()
    for command in (
        "serve",
        "demo",
        "login",
        "logout",
        "python -m acp_agent.snapshot run",
        "python -m acp_agent.snapshot record",
    ):
        (line,) = [line for line in out if line.strip().startswith(command + " ")]
        assert len(line.split(maxsplit=len(command.split()))[-1]) > 10  # what it does, on the same line


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"acp-agent {acp_agent.__version__}\n"


def test_a_configuration_problem_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACP_AGENT_FIXTURES", str(tmp_path / "nowhere"))
    monkeypatch.setenv("ACP_AGENT_SESSIONS", str(tmp_path / "sessions"))
    frozen = gc.get_freeze_count()
    assert main(["--config", str(ROOT / "cordis.snapshot.yml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acp-agent: loader row 'model': FixtureNotFound: replay fixture not found")
    # The collector, paused while a server starts, is on again; only a server freezes its start-up.
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_a_config_file_that_is_missing_is_one_clear_line_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "cordis.yml"
    assert main(["--config", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == f"acp-agent: loader row '<file>': {missing}: cannot be read: No such file or directory\n"


def test_an_unknown_log_level_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_AGENT_LOG", "loud")
    assert main(["logout"]) == 2
    assert (
        capsys.readouterr().err
        == "acp-agent: ACP_AGENT_LOG='loud' is not a log level (DEBUG, INFO, WARNING, ERROR, CRITICAL)\n"
    )


def test_a_sessions_directory_of_another_user_is_refused_at_start(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    foreign = tmp_path / "sessions"
    foreign.mkdir()
    if os.getuid() == 0:
        os.chown(foreign, 65534, 65534)
    else:  # pragma: no cover - the suite runs as root in CI; as a user, root's own directory
        foreign = Path("/")
    monkeypatch.setenv("ACP_AGENT_SESSIONS", str(foreign))
    assert main(["--config", str(ROOT / "cordis.record.yml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"acp-agent: loader row 'sessions': ForeignSessionsDirectory: sessions directory {foreign} belongs to uid "
    )
    assert err.count("\n") == 1


def test_logout_deletes_the_stored_keys_and_login_needs_a_key_to_ask_for(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`login` is driven through a real terminal in tests/e2e/test_sign_in.py."""
    monkeypatch.setenv("ACP_AGENT_CONFIG", str(tmp_path / "config"))
    monkeypatch.setenv("ACP_AGENT_SESSIONS", str(tmp_path / "sessions"))
    store = CredentialStore()
    store.save({"DEEPSEEK_API_KEY": "sk-stored"})
    assert main(["logout"]) == 0
    assert not store.path.exists()
    keyless = tmp_path / "keyless.yml"
    keyless.write_text("- {id: sessions, name: acp_agent.session.plugin}\n- {id: llm, name: acp_agent.llm.service}\n")
    assert main(["--config", str(keyless), "login"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"acp-agent: signed out; removed {store.path}",
        "acp-agent: the models of this composition need no API key; nothing to sign in to",
    ]
