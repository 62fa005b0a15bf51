"""Slash commands through the real server: what the snapshots of `fixtures/slash-commands*` show,
asserted where a reader could miss it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.commands.texts import INIT_PROMPT
from acp_agent.compaction.texts import NOTHING_TO_COMPACT
from acp_agent.snapshot.result import RunResult
from tests.paths import FIXTURES

Run = Callable[[Path], RunResult]


def frames(result: RunResult) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout]


def update_kind(frame: dict[str, Any]) -> str | None:
    return (
        frame.get("params", {}).get("update", {}).get("sessionUpdate")
        if frame.get("method") == "session/update"
        else None
    )


def command_lists(result: RunResult) -> list[tuple[int, list[str]]]:
    """Where each command list went out (frame index) and the names it offered."""
    return [
        (i, [c["name"] for c in f["params"]["update"]["availableCommands"]])
        for i, f in enumerate(frames(result))
        if update_kind(f) == "available_commands_update"
    ]


def user_messages(result: RunResult) -> list[tuple[str, str]]:
    return [
        (e["data"]["source"]["kind"], e["data"]["content"][0]["text"])
        for e in result.logs["s1"][1:]
        if e["type"] == "user/message"
    ]


def test_the_list_follows_the_answer_to_session_new_and_again_when_a_file_appears(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "slash-commands")
    sent = frames(result)
    lists = command_lists(result)
    created = next(i for i, f in enumerate(sent) if "sessionId" in (f.get("result") or {}))
    assert lists[0] == (
        created + 1,
        ["compact", "deploy", "init", "permissions", "rename", "review", "sandbox", "standup"],
    )
    # todo.md was written between two prompts: the list goes out once more, before that turn's frames.
    todo = next(i for i, f in enumerate(sent) if f.get("id") == 6)  # the answer to /nosuch
    assert lists[1] == (
        todo + 1,
        ["compact", "deploy", "init", "permissions", "rename", "review", "sandbox", "standup", "todo"],
    )
    assert len(lists) == 2


def test_each_command_became_the_turn_it_stands_for(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "slash-commands")
    assert user_messages(result) == [
        ("command", "/compact keep the release notes"),
        (
            "user",
            (
                "Review notes.txt for bugs, unclear names and missing tests. "
                "List what you find, most serious first; change nothing."
            ),
        ),
        # The project's deploy.md wins over the user's of the same name.
        (
            "user",
            (
                "Check the project is ready to ship\n\n"
                "Check that the project is ready to ship to staging: the notes are final and nothing is left to do. "
                "Answer in one line."
            ),
        ),
        ("user", "/nosuch command, sent as typed"),
        ("user", "List the open tasks in notes.txt."),
        ("user", INIT_PROMPT),
    ]
    reply = next(f for f in frames(result) if update_kind(f) == "agent_message_chunk")
    assert reply["params"]["update"]["content"]["text"] == NOTHING_TO_COMPACT
    # /compact had nothing to compact: it made no model call and named nothing, so the title is
    # the first model turn's prompt.
    title = next(f for f in frames(result) if update_kind(f) == "session_info_update")
    assert title["params"]["update"]["title"].startswith("Review notes.txt for bugs")
    assert (result.cwd / "AGENTS.md").read_text().startswith("# Agent instructions")  # /init's turn wrote it


def test_a_loaded_session_gets_its_list_after_the_answer_and_replays_the_command(scenario_run: Run) -> None:
    result = scenario_run(FIXTURES / "slash-commands-load")
    sent = frames(result)
    loaded = next(i for i, f in enumerate(sent) if "modes" in (f.get("result") or {}))
    assert [update_kind(f) for f in sent[1:loaded]] == ["user_message_chunk", "agent_message_chunk"]
    assert command_lists(result) == [(loaded + 1, ["compact", "init", "permissions", "rename", "sandbox"])]
