"""Claude Code settings rules: which calls each covers, and how a decision is picked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.permissions.settings import FILE_LIMIT, SettingsRule, covers, first_match, rules_of, settings_rules

HOME = Path("/home/me")
CWD = Path("/work/app")


def rule(text: str, decision: str = "allow") -> SettingsRule:
    [found] = settingsrules_of({"permissions": {decision: [text]}})
    return found


def settingsrules_of(document: Any, tmp: Path = Path("/nonexistent")) -> list[SettingsRule]:
    return rules_of(document, tmp / "settings.json", None)


def covered(text: str, tool: str, decision: str = "allow", command: str | None = None, **arguments: Any) -> bool:
    return covers(rule(text, decision), tool, arguments, command, CWD, HOME)


def test_bash_rules() -> None:
    assert covered("Bash", "bash", command="anything")
    assert covered("Bash(npm test:*)", "bash", command="npm test --watch")
    assert covered("Bash(npm test *)", "bash", command="npm test")
    assert not covered("Bash(npm test:*)", "bash", command="npm test && rm -rf /")  # an allow needs every part
    assert covered("Bash(rm:*)", "bash", "deny", command="ls && rm x")  # a deny one part
    assert covered("Bash(git status)", "bash", command="git status")
    assert not covered("Bash(git status)", "bash", command="git status --short")
    assert not covered("Bash(git status)", "read_file", path="x")


def test_path_rules() -> None:
    assert covered("Read(./secrets/**)", "read_file", path="secrets/a/b.txt")
    assert covered("Read(secrets)", "read_file", path="secrets/key")
    assert not covered("Read(./secrets/**)", "read_file", path="public/a.txt")
    assert covered("Edit(src/*.py)", "write_file", path="src/a.py") and not covered(
        "Edit(src/*.py)", "write_file", path="src/x/a.py"
    )
    assert covered("Write(//etc/?osts)", "write_file", path="/etc/hosts")
    assert not covered("Write(src/**)", "edit_file", path="src/a.py")
    assert covered("Read(~/notes.md)", "read_file", path=str(HOME / "notes.md"))
    assert not covered("Read(x)", "read_file", path=3)


def test_web_and_mcp_rules() -> None:
    assert covered("WebFetch(domain:example.com)", "web_fetch", url="https://docs.example.com/a")
    assert not covered("WebFetch(domain:example.com)", "web_fetch", url="https://example.org/")
    assert not covered("WebFetch(example.com)", "web_fetch", url="https://example.com/")
    assert covered("mcp__git__status", "mcp__git__status") and covered("mcp__git", "mcp__git__log")
    assert not covered("mcp__git", "mcp__github__log") and not covered("Unknown", "bash")


def test_deny_then_ask_then_allow() -> None:
    rules = [rule("Bash"), rule("Bash(rm:*)", "ask"), rule("Bash(rm -rf:*)", "deny")]
    assert first_match(rules, "bash", {}, "rm -rf x", CWD, HOME) == rules[2]
    assert first_match(rules, "bash", {}, "rm x", CWD, HOME) == rules[1]
    assert first_match(rules, "bash", {}, "ls", CWD, HOME) == rules[0]
    assert first_match(rules, "read_file", {"path": "x"}, None, CWD, HOME) is None


def test_the_files_and_what_is_left_out(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert settingsrules_of([]) == [] and settingsrules_of({"permissions": {"allow": "Bash"}}) == []
    assert settingsrules_of({"permissions": {"allow": ["Bash(", 3]}}) == []
    home, cwd = tmp_path / "home", tmp_path / "p"
    (home / ".claude").mkdir(parents=True)
    (cwd / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash"]}}), encoding="utf-8")
    (cwd / ".claude" / "settings.json").write_text("{broken", encoding="utf-8")
    (cwd / ".claude" / "settings.local.json").write_text(" " * (FILE_LIMIT + 1), encoding="utf-8")
    [only] = settings_rules(cwd, home)
    assert (only.text, only.project) == ("Bash", None)
    assert "are not used" in caplog.text
