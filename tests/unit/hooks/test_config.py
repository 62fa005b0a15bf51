"""Reading hook files: each dialect's matchers, and every way a file is left out (with a warning)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from acp_agent.hooks.config import FILE_LIMIT, HookSource, hook_sources, load_hooks, read_source
from acp_agent.hooks.matchers import Matcher, from_hook_input, hook_input, tool_names


def source(tmp_path: Path, document: Any, dialect: str = "claude", *, project: bool = True) -> HookSource:
    path = tmp_path / "hooks.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return HookSource(path, "claude" if dialect == "claude" else "codex", tmp_path if project else None)


def group(matcher: Any = None, **entry: Any) -> dict[str, Any]:
    handler = {"type": "command", "command": "true", **entry}
    return {"hooks": [handler]} if matcher is None else {"matcher": matcher, "hooks": [handler]}


def test_claude_matchers_are_word_lists_or_regular_expressions() -> None:
    assert Matcher.parse("Write|Edit", "claude").matches(tool_names("edit_file"))
    assert not Matcher.parse("Write|Edit", "claude").matches(tool_names("read_file"))
    assert Matcher.parse("*", "claude").matches(("anything",))
    assert Matcher.parse("mcp__git__.*", "claude").matches(tool_names("mcp__git__status"))
    assert not Matcher.parse("Bash", "claude").matches(("BashOutput",))  # a word is exact
    assert Matcher.parse("Bash", "codex").matches(("BashOutput",))  # Codex: always a search
    assert Matcher.parse("", "codex").matches(("x",))
    assert tool_names("bash") == ("Bash", "bash") and tool_names("todo_write") == ("todo_write",)


def test_the_files_come_from_the_agent_the_user_then_the_project(tmp_path: Path) -> None:
    sources = hook_sources(tmp_path / "p", tmp_path / "home", tmp_path / "config")
    assert [(s.path.relative_to(tmp_path), s.dialect, s.project is not None) for s in sources] == [
        (Path("config/hooks.json"), "claude", False),
        (Path("home/.claude/settings.json"), "claude", False),
        (Path("home/.codex/hooks.json"), "codex", False),
        (Path("p/.claude/settings.json"), "claude", True),
        (Path("p/.claude/settings.local.json"), "claude", True),
        (Path("p/.codex/hooks.json"), "codex", True),
    ]
    assert len(hook_sources(None, tmp_path, tmp_path)) == 3


def test_a_valid_file_gives_its_handlers_and_skips_other_events(tmp_path: Path) -> None:
    found = load_hooks(
        [
            source(
                tmp_path, {"hooks": {"PreToolUse": [group("Bash", timeout=5)], "Notification": [group()]}, "model": "x"}
            ),
            HookSource(tmp_path / "absent.json", "codex"),
        ]
    )
    [handler] = found.handlers
    assert (handler.event, handler.timeout, found.warnings) == ("PreToolUse", 5.0, ())
    assert found.select("PreToolUse", ("Read",)) == [] and found.select("Stop") == []
    assert load_hooks([source(tmp_path, {"permissions": {}})]).sources == ()


@pytest.mark.parametrize(
    ("document", "warning"),
    [
        ("{not json", "Expecting property name"),
        ([], "the file is not a JSON object"),
        ({"hooks": []}, "`hooks` is not an object"),
        ({"hooks": {"Stop": {}}}, "`hooks.Stop` is not a list"),
        ({"hooks": {"Stop": [1]}}, "a group of `hooks.Stop` is not an object with a `hooks` list"),
        ({"hooks": {"Stop": [{"hooks": {}}]}}, "a group of `hooks.Stop` is not an object with a `hooks` list"),
        ({"hooks": {"Stop": [group(3)]}}, "a matcher of `hooks.Stop` is not a string"),
        ({"hooks": {"Stop": [group(command=" ")]}}, "a handler of `hooks.Stop` has no `command`"),
        ({"hooks": {"Stop": [group(timeout=0)]}}, "a handler of `hooks.Stop` has an invalid `timeout`"),
        ({"hooks": {"Stop": [group(timeout=True)]}}, "a handler of `hooks.Stop` has an invalid `timeout`"),
        ({"hooks": {"Stop": [group("[")]}}, "the matcher '[' of `hooks.Stop` is not a valid regular expression"),
    ],
)
def test_an_invalid_file_is_left_out_whole_with_a_warning_naming_it(
    tmp_path: Path, document: Any, warning: str
) -> None:
    found = load_hooks([source(tmp_path, document)])
    assert found.handlers == ()
    [said] = found.warnings
    assert said.startswith(f"hooks of {tmp_path / 'hooks.json'} not read: ") and warning in said


def test_other_handler_types_are_skipped_with_one_warning(tmp_path: Path) -> None:
    document = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "prompt"}, {"type": "agent"}, 5, {"type": "command", "command": "true"}]}]
        }
    }
    handlers, warning = read_source(source(tmp_path, document))
    assert len(handlers) == 1
    assert (
        warning
        == f"hooks of {tmp_path / 'hooks.json'}: handlers of type None, agent, prompt skipped (only `command` runs)"
    )


def test_a_large_file_or_a_link_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    big = source(tmp_path, " " * (FILE_LIMIT + 1))
    assert read_source(big) == ([], f"hooks of {big.path} not read: the file is larger than {FILE_LIMIT} bytes")
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    os.symlink(outside, project / "hooks.json")
    handlers, warning = read_source(HookSource(project / "hooks.json", "claude", project))
    assert handlers == [] and warning is not None and "not read" in warning


def test_a_file_tools_arguments_reach_hooks_under_claude_codes_names_too() -> None:
    arguments = {"path": "a.py", "old_text": "x", "new_text": "y", "replace_all": False}
    assert hook_input("edit_file", arguments) == {
        **arguments,
        "file_path": "a.py",
        "old_string": "x",
        "new_string": "y",
    }
    assert hook_input("bash", {"command": "ls"}) == {"command": "ls"}
    # An updatedInput in either naming comes back in ours; Claude Code's name wins over ours.
    assert from_hook_input("edit_file", {"file_path": "b.py", "path": "a.py", "new_string": "z"}) == {
        "path": "b.py",
        "new_text": "z",
    }
    assert from_hook_input("write_file", {"path": "c.py", "content": "c"}) == {"path": "c.py", "content": "c"}
