"""Saved rules: the prefix an answer saves, how a command matches, the file they live in (command
and scope rules)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acp_agent.permissions.rules import CommandRule, RuleFile, ScopeRule, command_prefix, match


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("npm test", "npm test"),
        ("npm test -- --watch", "npm test"),
        ("git log --oneline", "git log"),
        ("pytest tests/unit", "pytest"),
        ("cat notes.txt", "cat"),
        ("FOO=1 make", None),
        ("python -m pytest", None),  # a bare interpreter allows anything
        ("bash script.sh", None),
        ("npm test && rm -rf /", None),
        ("make; make install", None),
        ("ls | wc -l", None),
        ("echo $(whoami)", None),  # a substitution runs anything
        ("", None),
        ("echo 'unbalanced", None),
    ],
)
def test_the_prefix_an_answer_saves(command: str, prefix: str | None) -> None:
    assert command_prefix(command) == prefix


RULES = [CommandRule("allow", "npm test"), CommandRule("allow", "git status"), CommandRule("deny", "git push")]


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("npm test", "allow"),
        ("npm test -- --watch", "allow"),
        ("npm testing", None),  # whole words only
        ("npm test && git status", "allow"),  # every part matches
        ("npm test && rm -rf build", None),  # one part does not: ask
        ("npm test; git push origin", "deny"),  # a deny wins
        ("git push", "deny"),
        ("npm test $(rm -rf ~)", None),
        ("npm test `rm -rf ~`", None),
        ("", None),
    ],
)
def test_a_command_matches_when_every_part_does_and_a_deny_wins(command: str, decision: str | None) -> None:
    found = match(RULES, command)
    assert (found.decision if found else None) == decision


def test_the_file_is_private_kept_by_project_and_read_as_edited(tmp_path: Path) -> None:
    path = tmp_path / "config" / "permissions.json"
    rules = RuleFile(path)
    project, other = Path("/p/one"), Path("/p/two")
    assert rules.rules(project) == []  # no file yet
    rules.add(project, CommandRule("allow", "npm test"))
    rules.add(project, CommandRule("allow", "npm test"))  # once only
    rules.add(project, CommandRule("deny", "git push"))
    rules.add(other, CommandRule("allow", "make"))
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert rules.rules(project) == [CommandRule("deny", "git push"), CommandRule("allow", "npm test")]
    data = json.loads(path.read_text())
    data["projects"]["/p/one"]["allow"].append("ls")  # edited by hand
    data["projects"]["/p/one"]["deny"].append(3)  # not a prefix: ignored
    path.write_text(json.dumps(data))
    assert CommandRule("allow", "ls") in rules.rules(project)
    rules.remove(project, CommandRule("allow", "npm test"))
    rules.remove(project, CommandRule("allow", "never saved"))
    assert rules.rules(project) == [CommandRule("deny", "git push"), CommandRule("allow", "ls")]
    assert rules.rules(other) == [CommandRule("allow", "make")]
    path.write_text("not json")
    assert rules.rules(project) == []
    path.write_text('{"projects": {"/p/one": ["wrong shape"]}}')
    assert rules.rules(project) == []


def test_the_rule_that_decided_is_named() -> None:
    assert match(RULES, "npm test; git push origin") == CommandRule("deny", "git push")
    assert match(RULES, "git status && npm test") == CommandRule("allow", "git status")


def test_scope_rules_live_beside_the_command_rules_and_older_files_still_load(tmp_path: Path) -> None:
    path = tmp_path / "permissions.json"
    older = {"version": 1, "projects": {"/p/one": {"allow": ["make"]}, "/p/two": ["wrong shape"]}}
    path.write_text(json.dumps(older))  # written before scope rules existed
    rules = RuleFile(path)
    project = Path("/p/one")
    assert rules.scope_rules(project) == []
    assert rules.saved(project) == [CommandRule("allow", "make")]
    rules.add(project, ScopeRule("web_fetch", "127.0.0.1"))
    rules.add(project, ScopeRule("web_fetch", "127.0.0.1"))  # once only
    rules.add(project, ScopeRule("web_fetch", "docs.python.org"))
    rules.add(Path("/p/two"), ScopeRule("web_fetch", "example.com"))  # its damaged entry is replaced
    data = json.loads(path.read_text())
    assert data["projects"]["/p/one"] == {"allow": ["make"], "scopes": {"web_fetch": ["127.0.0.1", "docs.python.org"]}}
    assert rules.saved(project) == [
        CommandRule("allow", "make"),
        ScopeRule("web_fetch", "127.0.0.1"),
        ScopeRule("web_fetch", "docs.python.org"),
    ]
    rules.remove(project, ScopeRule("web_fetch", "127.0.0.1"))
    rules.remove(project, ScopeRule("web_fetch", "never.saved"))
    rules.remove(Path("/p/none"), ScopeRule("web_fetch", "example.com"))
    assert rules.scope_rules(project) == [ScopeRule("web_fetch", "docs.python.org")]
    assert rules.scope_rules(Path("/p/two")) == [ScopeRule("web_fetch", "example.com")]
    data = json.loads(path.read_text())
    data["projects"]["/p/one"]["scopes"] = ["wrong shape"]  # edited by hand
    data["projects"]["/p/two"]["scopes"]["web_fetch"].append(7)  # not a scope: ignored
    path.write_text(json.dumps(data))
    assert rules.scope_rules(project) == []
    assert rules.scope_rules(Path("/p/two")) == [ScopeRule("web_fetch", "example.com")]
    rules.add(project, ScopeRule("web_fetch", "127.0.0.1"))  # the damaged part is replaced
    assert rules.scope_rules(project) == [ScopeRule("web_fetch", "127.0.0.1")]
