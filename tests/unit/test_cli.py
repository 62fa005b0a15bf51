"""The `acp-agent` command line: `demo` runs the keyless demo (serving is covered end to end)."""

from __future__ import annotations

import pytest

from acp_agent.cli import main


def test_demo_subcommand_replays_the_bundled_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "stop reason: end_turn" in out


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    assert "demo" in capsys.readouterr().out
