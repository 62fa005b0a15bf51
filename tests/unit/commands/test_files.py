"""Command files: front-matter, description, input, `$ARGUMENTS`, which file wins."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from acp_agent.commands import command_files, read_command_file
from acp_agent.commands.files import FILE_LIMIT, FRONT_MATTER_LIMIT
from acp_agent.commands.texts import FILE_INPUT_HINT


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_front_matter_gives_the_description_and_the_hint(tmp_path: Path) -> None:
    path = write(
        tmp_path / "review.md",
        "---\ndescription: Review a file\nargument-hint: the file\n---\nReview $ARGUMENTS now.\n",
    )
    command = read_command_file(path)
    assert command is not None
    assert (command.name, command.description, command.input_hint) == ("review", "Review a file", "the file")
    assert command.template == "Review $ARGUMENTS now."
    assert command.prompt("a.py") == "Review a.py now."


def test_without_front_matter_the_first_line_describes_and_arguments_give_input(tmp_path: Path) -> None:
    command = read_command_file(write(tmp_path / "ship.md", "# Ship it to $ARGUMENTS\n\nShip to $ARGUMENTS, twice.\n"))
    assert command is not None
    assert (command.description, command.input_hint) == ("Ship it to $ARGUMENTS", FILE_INPUT_HINT)
    assert command.prompt("prod") == "# Ship it to prod\n\nShip to prod, twice."


def test_a_template_without_arguments_takes_no_input_and_keeps_what_was_typed(tmp_path: Path) -> None:
    command = read_command_file(write(tmp_path / "standup.md", "Summarize today.\n"))
    assert command is not None and command.input_hint is None
    assert command.prompt("") == "Summarize today."
    assert command.prompt("briefly") == "Summarize today.\n\nbriefly"


def test_front_matter_that_is_not_a_mapping_is_ignored(tmp_path: Path) -> None:
    listed = read_command_file(write(tmp_path / "a.md", "---\n- one\n---\nDo A.\n"))
    assert listed is not None and listed.description == "Do A."


@pytest.mark.parametrize(
    ("front_matter", "why"),
    [
        ("description: [unclosed", "is not YAML (line 2, column 1: "),
        ("date: 2024-02-30", "is not YAML (ValueError: day is out of range for month)"),
        ("x: !!float abc", "is not YAML (ValueError: could not convert string to float"),
        ("x: " + "[" * 3000 + "]" * 3000, "is not YAML ("),  # past 1000 levels some libyaml builds refuse
        ("x: " + "[" * 200 + "]" * 200, "is not YAML (nested deeper than 100 levels)"),
        ("x: !!python/object:os.system 1", "is not YAML (line 1, column 4: could not determine a constructor"),
        ("description: " + "x" * FRONT_MATTER_LIMIT, f"holds more than {FRONT_MATTER_LIMIT} bytes"),
    ],
)
def test_a_file_whose_front_matter_does_not_parse_is_left_out_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, front_matter: str, why: str
) -> None:
    with caplog.at_level(logging.WARNING):
        assert read_command_file(write(tmp_path / "bad.md", f"---\n{front_matter}\n---\nDo B.\n")) is None
    (record,) = caplog.records
    assert f"ignoring the command file {tmp_path / 'bad.md'}: its front-matter {why}" in record.getMessage()


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("two words.md", "Do it.", "no spaces or slashes"),
        ("empty.md", "---\ndescription: nothing\n---\n\n", "no prompt text"),
        ("latin1.md", b"caf\xe9\n", "can't decode"),
    ],
)
def test_files_that_cannot_be_commands_are_left_out_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str, content: str | bytes, why: str
) -> None:
    with caplog.at_level(logging.WARNING):
        assert read_command_file(write(tmp_path / name, content)) is None
    assert why in caplog.text


def test_the_projects_file_wins_over_the_users(tmp_path: Path) -> None:
    cwd, config = tmp_path / "cwd", tmp_path / "config"
    write(config / "commands" / "deploy.md", "The user's deploy.")
    write(config / "commands" / "mine.md", "Only mine.")
    write(cwd / ".acp-agent" / "commands" / "deploy.md", "The project's deploy.")
    write(cwd / ".acp-agent" / "commands" / "notes.txt", "Not a command.")
    found = command_files(cwd, config)
    assert sorted(found) == ["deploy", "mine"]
    assert found["deploy"].template == "The project's deploy."
    assert list(command_files(None, config)) == ["deploy", "mine"]
    assert command_files(cwd, tmp_path / "absent") == {"deploy": found["deploy"]}


def test_a_directory_that_cannot_be_listed_offers_no_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(self: Path, pattern: str) -> Any:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "glob", refuse)
    assert command_files(tmp_path, tmp_path / "config") == {}
    assert "cannot list the command files" in caplog.text


def test_a_projects_command_file_is_read_only_inside_the_cwd_and_only_a_regular_bounded_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A repository cannot make `/name` send the model a file of the user's from elsewhere, nor
    stall or exhaust the server with a FIFO or an endless device; the user's own links are theirs."""
    cwd, config, elsewhere = tmp_path / "cwd", tmp_path / "config", tmp_path / "elsewhere"
    secret = write(elsewhere / "credentials", "aws_secret_access_key = SECRET")
    commands = cwd / ".acp-agent" / "commands"
    write(cwd / "shared" / "review.md", "Review it.")
    commands.mkdir(parents=True)
    (commands / "review.md").symlink_to(cwd / "shared" / "review.md")  # inside the cwd: followed
    (commands / "leak.md").symlink_to(secret)
    (commands / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(commands / "pipe.md")
    write(commands / "huge.md", "x" * (FILE_LIMIT + 1))
    (config / "commands").mkdir(parents=True)
    (config / "commands" / "mine.md").symlink_to(write(elsewhere / "dotfiles-mine.md", "Mine, from my dotfiles."))
    with caplog.at_level(logging.WARNING):
        found = command_files(cwd, config)
    assert sorted(found) == ["mine", "review"]
    assert found["mine"].template == "Mine, from my dotfiles."
    assert "SECRET" not in repr(found)
    assert "leak.md" in caplog.text and "leads outside" in caplog.text
    assert "pipe.md: [Errno 22] not a regular file" in caplog.text
    assert f"huge.md: {FILE_LIMIT + 1} bytes, more than a command's {FILE_LIMIT}" in caplog.text


def test_a_loop_of_links_among_the_files_is_left_out_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cwd, config = tmp_path / "cwd", tmp_path / "config"
    for directory in (config / "commands", cwd / ".acp-agent" / "commands"):
        directory.mkdir(parents=True)
        (directory / "a.md").symlink_to("b.md")
        (directory / "b.md").symlink_to("a.md")
    write(config / "commands" / "fine.md", "Fine.")
    with caplog.at_level(logging.WARNING):
        assert list(command_files(cwd, config)) == ["fine"]
    assert caplog.text.count("Too many levels of symbolic links") == 4
