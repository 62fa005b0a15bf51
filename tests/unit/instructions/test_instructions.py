"""Project instructions: which files, the section they make (caps, cut notes), and the agents
that see it (logged before the turn when it changed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from acp_agent.agent.keys import AGENTS
from acp_agent.config_dir import ENV_CONFIG
from acp_agent.instructions import (
    FILE_LIMIT,
    INSTRUCTIONS_EVENT,
    TOTAL_LIMIT,
    instruction_files,
    project_root,
    read_instructions,
)
from acp_agent.instructions.texts import HEADING, INSTRUCTIONS_ORDER
from acp_agent.kernel import Row, compose
from acp_agent.session import TextContent
from acp_agent.session.persistence import SESSIONS
from tests.unit.agent.conftest import spied


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_the_heading_and_the_order_are_exactly_these() -> None:
    assert HEADING == (
        "Instructions for working here, from AGENTS.md files (a directory's CLAUDE.md when it has "
        "none): the user's own first, then the project's, from its root down to the working "
        "directory. Follow them; when two disagree, the later (more specific) one wins."
    )
    assert INSTRUCTIONS_ORDER == 10
    assert (FILE_LIMIT, TOTAL_LIMIT) == (32 * 1024, 64 * 1024)


def test_files_from_the_user_then_the_repository_root_down_to_the_cwd(tmp_path: Path) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    cwd = repo / "a" / "b"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    write(tmp_path / "AGENTS.md", "above the repository: never read")
    user = write(config / "AGENTS.md", "mine")
    write(config / "CLAUDE.md", "not read: the user's file is AGENTS.md")
    root = write(repo / "AGENTS.md", "root")
    fallback = write(repo / "a" / "CLAUDE.md", "a, from Claude")
    here = write(cwd / "AGENTS.md", "here")
    write(cwd / "CLAUDE.md", "not read: this directory has an AGENTS.md")
    assert instruction_files(cwd, config) == [user, root, fallback, here]
    assert instruction_files(None, config) == [user]


def test_outside_a_repository_only_the_cwd_is_read(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "a parent, but no repository")
    here = write(tmp_path / "cwd" / "AGENTS.md", "here")
    assert instruction_files(tmp_path / "cwd", tmp_path / "no-config") == [here]


def test_the_section_names_each_file_and_skips_blank_and_unreadable_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    one = write(tmp_path / "one.md", "First.\n\n")
    blank = write(tmp_path / "blank.md", " \n")
    two = write(tmp_path / "two.md", "Second, with {{cwd}} kept as written.")
    found = read_instructions([one, blank, tmp_path / "missing.md", two])
    assert (
        found.text == f"{HEADING}\n\n--- {one} ---\nFirst.\n\n--- {two} ---\nSecond, with {{{{cwd}}}} kept as written."
    )
    assert [(f.path, f.size, f.shown) for f in found.files] == [(str(one), 8, 8), (str(two), 37, 37)]
    assert "cannot read the instructions file" in caplog.text
    assert read_instructions([blank]).text == ""


def test_files_are_cut_at_32_kib_each_and_64_kib_in_all(tmp_path: Path) -> None:
    big = write(tmp_path / "big.md", "a" * (FILE_LIMIT + 100))
    second = write(tmp_path / "second.md", "b" * (FILE_LIMIT - 10))
    third = write(tmp_path / "third.md", "c" * 50)
    fourth = write(tmp_path / "fourth.md", "d" * 5)
    found = read_instructions([big, second, third, fourth])
    assert [(f.size, f.shown) for f in found.files] == [
        (FILE_LIMIT + 100, FILE_LIMIT),
        (FILE_LIMIT - 10, FILE_LIMIT - 10),
        (50, 10),
        (5, 0),
    ]
    assert f"{'a' * FILE_LIMIT}\n[... 100 bytes of {big} not shown]" in found.text
    assert f"--- {third} ---\n{'c' * 10}\n[... 40 bytes of {third} not shown]" in found.text
    assert found.text.endswith(f"--- {fourth} ---\n[... 5 bytes of {fourth} not shown]")


def test_a_projects_file_that_links_out_of_the_project_is_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A repository cannot hand the model, before every turn, a file of the user's from elsewhere
    (a credentials file under the name AGENTS.md); links inside it, and the user's own, are followed."""
    repo, config, elsewhere = tmp_path / "repo", tmp_path / "config", tmp_path / "elsewhere"
    cwd = repo / "app"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    secret = write(elsewhere / "credentials", "aws_secret_access_key = SECRET")
    (repo / "AGENTS.md").symlink_to(secret)
    (cwd / "AGENTS.md").symlink_to(write(repo / "docs" / "app.md", "The app's rules."))  # inside the repository
    config.mkdir()
    (config / "AGENTS.md").symlink_to(write(elsewhere / "dotfiles.md", "My own rules."))
    assert project_root(cwd) == repo and project_root(elsewhere) == elsewhere
    found = read_instructions(instruction_files(cwd, config), project_root(cwd))
    assert "SECRET" not in found.text
    assert [f.path for f in found.files] == [str(config / "AGENTS.md"), str(cwd / "AGENTS.md")]
    assert "My own rules." in found.text and "The app's rules." in found.text
    assert f"cannot read the instructions file {repo / 'AGENTS.md'}" in caplog.text and "leads outside" in caplog.text


def test_only_what_is_shown_of_a_file_is_read(tmp_path: Path) -> None:
    """A file of 16 GiB (sparse: it takes no room on the disk) is not read whole, only its head."""
    path = write(tmp_path / "AGENTS.md", "Rules.\n")
    os.truncate(path, 16 << 30)
    [shown] = read_instructions([path], tmp_path).files
    assert (shown.size, shown.shown) == (16 << 30, FILE_LIMIT)


def test_a_cut_never_splits_a_character(tmp_path: Path) -> None:
    path = write(tmp_path / "AGENTS.md", "a" * (FILE_LIMIT - 1) + "é" + "z")
    [shown] = read_instructions([path]).files
    assert shown.shown == FILE_LIMIT - 1
    assert f"{'a' * (FILE_LIMIT - 1)}\n[... 3 bytes of {path} not shown]" in read_instructions([path]).text


@pytest.mark.anyio
async def test_every_turn_reads_them_again_and_logs_them_when_they_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_CONFIG, str(tmp_path / "config"))
    ctx, requests = spied(tmp_path, [{"text": "1"}, {"text": "2"}, {"text": "3"}, {"text": "4"}])
    compose([Row(id="instructions", name="acp_agent.instructions.plugin")], ctx)
    cwd = tmp_path / "cwd"
    agents_md = write(cwd / "AGENTS.md", "Use tabs in {{cwd}}.")

    def logged(agent: Any) -> list[str]:
        return [e.data.text for e in agent.session.events if e.type == INSTRUCTIONS_EVENT]

    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(cwd))
        for prompt in ("one", "two"):
            await agent.followup([TextContent(text=prompt)]).wait()
        section = f"{HEADING}\n\n--- {agents_md} ---\nUse tabs in {{{{cwd}}}}."
        assert logged(agent) == [section]  # once: the second turn found the same
        assert agent.session.events[0].type == INSTRUCTIONS_EVENT and agent.session.events[0].ignorable
        persona_end = requests[0].system.index("say what you did.")
        assert requests[0].system.index(section) > persona_end  # after the persona, placeholders left alone
        agents_md.unlink()
        await agent.followup([TextContent(text="three")]).wait()
        assert logged(agent) == [section, ""]
        assert HEADING not in requests[2].system
        write(cwd / "AGENTS.md", "Use spaces.")
        await agent.followup([TextContent(text="four")]).wait()
        assert "Use spaces." in logged(agent)[-1] and "Use spaces." in requests[3].system
        assert requests[3].system.count(HEADING) == 1


@pytest.mark.anyio
async def test_a_loaded_session_logs_them_again_only_when_they_changed_since(tmp_path: Path) -> None:
    ctx, requests = spied(tmp_path, [{"text": "1"}, {"text": "2"}, {"text": "3"}])
    compose([Row(id="instructions", name="acp_agent.instructions.plugin")], ctx)
    cwd = tmp_path / "cwd"
    write(cwd / "AGENTS.md", "Be brief.")
    async with ctx.running():
        first = await ctx.get(AGENTS).create(cwd=str(cwd))
        await first.followup([TextContent(text="one")]).wait()
        await first.dispose()
        again = await ctx.get(AGENTS).restore(ctx.get(SESSIONS).load(first.id))
        await again.followup([TextContent(text="two")]).wait()
        assert [e.type for e in again.session.events].count(INSTRUCTIONS_EVENT) == 1
        assert "Be brief." in requests[1].system  # the loaded agent got the section all the same
        await again.dispose()
        write(cwd / "AGENTS.md", "Be thorough.")
        third = await ctx.get(AGENTS).restore(ctx.get(SESSIONS).load(first.id))
        await third.followup([TextContent(text="three")]).wait()
        assert [e.type for e in third.session.events].count(INSTRUCTIONS_EVENT) == 2


def test_a_directory_that_cannot_be_looked_into_holds_no_instructions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_file", refuse)
    monkeypatch.setattr(Path, "exists", refuse)
    assert instruction_files(tmp_path, tmp_path / "config") == []


def test_an_additional_roots_project_instructions_follow_the_cwds_each_confined_to_its_project(
    tmp_path: Path,
) -> None:
    config, cwd, lib = tmp_path / "config", tmp_path / "app", tmp_path / "lib"
    (lib / ".git").mkdir(parents=True)
    app_rules = write(cwd / "AGENTS.md", "The app's rules.")
    lib_rules = write(lib / "pkg" / "AGENTS.md", "The library's rules.")
    write(lib / "AGENTS.md", "The repository's rules.")
    (lib / "CLAUDE.local.md").symlink_to(write(tmp_path / "secret", "SECRET"))  # out of lib's project
    files = instruction_files(cwd, config, [lib / "pkg", cwd])  # the cwd again: listed once
    assert files == [app_rules, lib / "AGENTS.md", lib / "CLAUDE.local.md", lib_rules]
    found = read_instructions(files, project_root(cwd), project_root(lib / "pkg"))
    assert "The library's rules." in found.text and "The repository's rules." in found.text
    assert "SECRET" not in found.text
