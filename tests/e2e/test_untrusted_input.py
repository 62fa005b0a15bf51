"""Hostile content through the real server: files a repository holds, what the model asks for,
what a tool answers, what a prompt carries. Each is refused or bounded where it comes in; the
session and the server go on, and a log that was written loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.session.content import MAX_ARGUMENTS_CHARS
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
    assert offered(wire.updates(session_id)) == [
        ["compact", "fine", "init", "permissions", "rename", "sandbox"]
    ]  # never changed
    assert code == 0 and "Traceback" not in wire.stderr_text
    warned = [line for line in wire.stderr_text.splitlines() if "ignoring the command file" in line]
    for name in BAD_FRONT_MATTER:  # one line each time the files are read, saying which and why
        assert any(f"{config / 'commands' / name}.md: its front-matter is not YAML" in line for line in warned)
        assert any(
            f"{cwd / '.acp-agent' / 'commands' / f'p{name}'}.md: its front-matter is not YAML" in line
            for line in warned
        )


def call_cards(updates: list[Frame]) -> dict[str, tuple[object, str]]:
    """Each tool call's rawInput and final status, by its id."""
    cards: dict[str, tuple[object, str]] = {}
    for params in updates:
        update = params["update"]
        if update["sessionUpdate"] == "tool_call":
            cards[update["toolCallId"]] = (update["rawInput"], update["status"])
        elif update["sessionUpdate"] == "tool_call_update" and "status" in update:
            cards[update["toolCallId"]] = (cards[update["toolCallId"]][0], update["status"])
    return cards


def results(updates: list[Frame]) -> dict[str, str]:
    return {
        u["update"]["toolCallId"]: u["update"]["content"][0]["content"]["text"]
        for u in updates
        if u["update"]["sessionUpdate"] == "tool_call_update" and u["update"].get("status") == "failed"
    }


async def test_calls_too_deep_too_large_repeated_or_unloggable_are_answered_and_the_thread_loads(
    tmp_path: Path,
) -> None:
    def deep(levels: int) -> str:
        return '{"path": ' + "[" * levels + "]" * levels + "}"

    calls = [
        {"id": "deep", "name": "read_file", "argumentsText": deep(300)},  # ended the server
        {"id": "deeper", "name": "read_file", "argumentsText": deep(5000)},  # past the JSON parser's stack
        {"id": "large", "name": "read_file", "arguments": {"path": "x" * MAX_ARGUMENTS_CHARS}},
        {"id": "twice", "name": "read_file", "arguments": {"path": "a.txt"}},
        {"id": "twice", "name": "read_file", "arguments": {"path": "a.txt"}},
        {"id": "bad\ud800", "name": "read\udc00file", "arguments": {"path": "a.txt"}},  # not Unicode: cannot be logged
    ]
    (tmp_path / "a.txt").write_text("A\n", encoding="utf-8")
    env = scripted_env(tmp_path, [{"toolCalls": calls}, {"text": "Noted."}])
    async with spawn_server(config=RECORD_CONFIG, env=env) as wire:
        session_id = await new_session(wire, tmp_path)
        answer = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("go")]})
        live = wire.updates(session_id)
        assert await wire.finish() == 0
    assert answer["result"] == {"stopReason": "end_turn"}  # the turn went on to its next model call
    assert {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Noted."}} in [
        u["update"] for u in live
    ]
    assert "Traceback" not in wire.stderr_text
    async with spawn_server(config=RECORD_CONFIG, env=env) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        loaded = await wire.request("session/load", {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []})
        replayed = wire.updates(session_id)
    assert "result" in loaded, loaded
    cards = call_cards(live)
    assert cards == call_cards(replayed)  # the log holds what the editor was shown
    assert cards == {
        "deep": ("[arguments not shown: nested deeper than 64 levels]", "failed"),
        "deeper": ("[arguments not shown: nested deeper than 64 levels]", "failed"),
        "large": (
            (
                f"[arguments not shown: {MAX_ARGUMENTS_CHARS + 12} characters, "
                f"more than the {MAX_ARGUMENTS_CHARS} a call may pass]"
            ),
            "failed",
        ),
        "twice": ({"path": "a.txt"}, "completed"),
        "twice~2": ({"path": "a.txt"}, "failed"),
        "bad\ufffd": ({"path": "a.txt"}, "failed"),
    }
    assert results(live) == {
        "deep": (
            "Error: the arguments for 'read_file' are nested deeper than 64 levels: "
            "the call did not run; pass smaller arguments"
        ),
        "deeper": (
            "Error: the arguments for 'read_file' are nested deeper than 64 levels: "
            "the call did not run; pass smaller arguments"
        ),
        "large": (
            f"Error: the arguments for 'read_file' are {MAX_ARGUMENTS_CHARS + 12} characters, "
            f"more than the {MAX_ARGUMENTS_CHARS} a call may pass:"
            " the call did not run; pass smaller arguments"
        ),
        "twice~2": "Error: another call of the same answer has the id 'twice': this call did not run; call it again",
        "bad\ufffd": "Error: unknown tool 'read\ufffdfile'",
    }


async def test_blocks_unfit_to_resend_and_empty_prompts_are_refused_at_the_door(tmp_path: Path) -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    refused = {
        "not base64": [text("look"), {"type": "image", "data": "<html>not an image</html>", "mimeType": "image/png"}],
        "empty data": [text("look"), {"type": "image", "data": "", "mimeType": "image/png"}],
        "html": [text("look"), {"type": "image", "data": png, "mimeType": "text/html"}],
        "blob": [
            {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "%%%", "mimeType": "application/x"}}
        ],
        "no block": [],
        "blank": [text("  \n"), text("")],
    }
    async with spawn_server(config=RECORD_CONFIG, env=scripted_env(tmp_path, [{"text": "A pixel."}])) as wire:
        session_id = await new_session(wire, tmp_path)
        switched = await wire.request(
            "session/set_config_option", {"sessionId": session_id, "configId": "model", "value": "replay-alt"}
        )
        assert "result" in switched, switched  # a model that takes images
        answers = {
            name: await wire.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
            for name, prompt in refused.items()
        }
        image = {"type": "image", "data": png, "mimeType": "image/png"}
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("look"), image]})
        assert await wire.finish() == 0
    images = "image/png, image/jpeg, image/gif, image/webp"
    assert {name: error_of(answer) for name, answer in answers.items()} == {
        "not base64": (-32602, "Invalid params: prompt[1]: data is not base64 (or is empty)"),
        "empty data": (-32602, "Invalid params: prompt[1]: data is not base64 (or is empty)"),
        "html": (
            -32602,
            f"Invalid params: prompt[1]: mimeType 'text/html' is not an image type this agent sends ({images})",
        ),
        "blob": (-32602, "Invalid params: prompt[0]: resource.blob is not base64"),
        "no block": (
            -32602,
            "Invalid params: prompt is empty (no block, or only blank text): there is nothing to send",
        ),
        "blank": (-32602, "Invalid params: prompt is empty (no block, or only blank text): there is nothing to send"),
    }
    assert answered["result"] == {"stopReason": "end_turn"}  # the one model call of the test
    [log] = (tmp_path / "sessions").glob("*/session.jsonl")
    turns = [line for line in log.read_text(encoding="utf-8").splitlines() if '"type":"turn/start"' in line]
    assert len(turns) == 1  # the refused prompts left no trace for later requests to carry
