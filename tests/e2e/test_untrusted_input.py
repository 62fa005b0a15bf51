"""Hostile content through the real server: files a repository holds, what the model asks for,
what a tool answers, what a prompt carries. Each is refused or bounded where it comes in; the
session and the server go on, and a log that was written loads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.test_bad_input import error_of, new_session, scripted_env, text
from tests.e2e.wire import RECORD_CONFIG, Frame, spawn_server

pytestmark = pytest.mark.anyio

BAD_FRONT_MATTER = {
    "date": "date: 2024-02-30",
    "float": "x: !!float abc",
    "deep": "x: " + "[" * 3000 + "]" * 3000,
}


def write_commands(directory: Path, names: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, front_matter in names.items():
        (directory / f"{name}.md").write_text(f"---\n{front_matter}\n---\nDo {name}.\n", encoding="utf-8")


def offered(updates: list[Frame]) -> list[list[str]]:
    return [
        [command["name"] for command in u["update"]["availableCommands"]]
        for u in updates
        if u["update"]["sessionUpdate"] == "available_commands_update"
    ]


async def test_command_files_whose_front_matter_does_not_parse_are_left_out_and_the_server_serves_on(
    tmp_path: Path,
) -> None:
    config, cwd = tmp_path / "config", tmp_path / "project"
    write_commands(config / "commands", {**BAD_FRONT_MATTER, "fine": "description: Fine"})
    cwd.mkdir()
    env = {**scripted_env(tmp_path, [{"text": "One."}, {"text": "Two."}]), "ACP_AGENT_CONFIG": str(config)}
    async with spawn_server(config=RECORD_CONFIG, env=env) as wire:
        session_id = await new_session(wire, cwd)
        first = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("hi")]})
        # The same files put in the project mid-session: the next prompt reads them, and answers.
        write_commands(cwd / ".acp-agent" / "commands", {f"p{name}": fm for name, fm in BAD_FRONT_MATTER.items()})
        second = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("/pdate now")]})
        code = await wire.finish()
    assert (first["result"], second["result"]) == ({"stopReason": "end_turn"}, {"stopReason": "end_turn"})
    assert offered(wire.updates(session_id)) == [["compact", "fine", "init"]]  # the list never changed
    assert code == 0 and "Traceback" not in wire.stderr_text
    warned = [line for line in wire.stderr_text.splitlines() if "ignoring the command file" in line]
    for name in BAD_FRONT_MATTER:  # one line each time the files are read, saying which and why
        assert any(f"{config / 'commands' / name}.md: its front-matter is not YAML" in line for line in warned)
        assert any(f"{cwd / '.acp-agent' / 'commands' / f'p{name}'}.md: its front-matter is not YAML" in line for line in warned)
