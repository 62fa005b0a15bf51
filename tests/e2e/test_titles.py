"""Titles through the real server process: `session/set_title` (unstable; the official package has
no model for it, so its frames are held against the unstable JSON Schema) and `/rename`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acp_agent.agent.titles import ENV_TITLES
from tests.e2e.test_delete import CHILD_CALL, listed
from tests.e2e.test_sessions import Store, error_of, load, prompt, result_of, store, text, updates_of  # noqa: F401 (fixture)
from tests.e2e.wire import RECORD_CONFIG, Wire, spawn_server
from tests.paths import ACP_UNSTABLE_SCHEMA

pytestmark = pytest.mark.anyio

SCHEMA = json.loads(ACP_UNSTABLE_SCHEMA.read_text(encoding="utf-8"))


def check(definition: str, value: Any) -> None:
    """`value` against the unstable schema's `definition` (the schema itself is not checked again)."""
    jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": SCHEMA["$defs"]}).validate(value)


async def set_title(wire: Wire, session_id: str, title: str) -> dict[str, Any]:
    params = {"sessionId": session_id, "title": title}
    check("SetSessionTitleRequest", params)
    return await wire.request("session/set_title", params)


def titles_shown(frames: list[dict[str, Any]]) -> list[str]:
    return [u["title"] for u in updates_of(frames) if u["sessionUpdate"] == "session_info_update"]


def logged_titles(store: Store, session_id: str) -> list[dict[str, Any]]:
    return [e["data"] for e in store.log(session_id) if e.get("type") == "session/title"]


async def test_a_title_set_by_the_user_is_logged_listed_shown_and_survives_a_load(store: Store) -> None:
    script = {"s1": [{"toolCalls": [CHILD_CALL]}, {"text": "Two."}], "s1/call_kid": [{"text": "2"}]}
    async with store.serve(script) as wire:
        initialized = wire.responses()[0]
        session_id = await store.new_session(wire)
        await prompt(wire, session_id, text("Count."))
        [child] = (store.sessions / session_id / "children").read_text(encoding="utf-8").split()
        before = len(wire.received)
        named = await set_title(wire, session_id, "  Counting\n  files ")
        shown = titles_shown(wire.received[before:])
        renamed, renamed_frames = await prompt(wire, session_id, text("/rename The count"))
        usage, _ = await prompt(wire, session_id, text("/rename"))
        first = await listed(wire, titled=True)
        await wire.request("session/close", {"sessionId": session_id})
        closed = await set_title(wire, session_id, "Closed and named")
        refusals = [
            await set_title(wire, session_id, " \n "),
            await set_title(wire, "nobody", "A"),
            await set_title(wire, child, "A child"),
        ]
    check("SessionCapabilities", result_of(initialized)["agentCapabilities"]["sessionCapabilities"])
    assert result_of(initialized)["agentCapabilities"]["sessionCapabilities"]["title"] == {}
    check("SetSessionTitleResponse", result_of(named))
    assert result_of(named) == {"title": "Counting files"} and shown == ["Counting files"]
    assert result_of(renamed) == {"stopReason": "end_turn"} and titles_shown(renamed_frames) == ["The count"]
    said = [u["content"]["text"] for u in updates_of(renamed_frames) if u["sessionUpdate"] == "agent_message_chunk"]
    assert said == ["Renamed this thread to “The count”."]
    assert result_of(usage) == {"stopReason": "end_turn"}
    assert first == [(session_id, "The count")]
    assert result_of(closed) == {"title": "Closed and named"}
    assert [error_of(r)[0] for r in refusals] == [-32602, -32002, -32602]
    assert "is a subagent session" in error_of(refusals[2])[1]
    assert logged_titles(store, session_id) == [
        {"title": t, "source": "user"} for t in ("Counting files", "The count", "Closed and named")
    ]
    shutil.rmtree(store.sessions / ".index")  # listed from the logs alone
    async with store.serve({}) as wire:
        relisted = await listed(wire, titled=True)
        stored_child = await set_title(wire, child, "A child")  # a child this client never saw
        _, replayed = await load(wire, session_id, store.cwd)
    assert relisted == [(session_id, "Closed and named")]
    assert error_of(stored_child)[1].endswith(f"name its top-level session {session_id!r}")
    assert titles_shown(replayed) == ["Count.", "Counting files", "The count", "Closed and named"]


def with_titles(store: Store) -> Path:
    """The scripted composition with the titles row."""
    config = store.tmp_path / "titles.yml"
    config.write_text(f"- include: {RECORD_CONFIG}\n- id: titles\n  disabled: false\n", encoding="utf-8")
    return config


async def test_the_model_names_the_thread_after_its_first_completed_turn_unless_the_user_did(store: Store) -> None:
    script = {
        "s1": [{"toolCalls": [CHILD_CALL]}, {"text": "Two files."}, {"text": "Still two."}],
        "s1/call_kid": [{"text": "2"}],  # a child's turn: never titled
        "s1#title": [{"text": '"Counting the files."\nA second line'}],
        "s2": [{"text": "Named."}],
        "s3": [{"text": "Failed."}],
        "s3#title": [{"throw": {"message": "the provider is down", "code": "SERVER"}}],
        "s4": [{"text": "Cut."}],
        "s4#title": [{"text": "A title cut short", "finish": "max-tokens"}],
    }
    async with spawn_server(config=with_titles(store), env={**store.env(script), ENV_TITLES: "true"}) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        modelled = await store.new_session(wire)
        _, first = await prompt(wire, modelled, text("How many files?"))
        await wire.wait_for(lambda f: f.get("params", {}).get("update", {}).get("title") == "Counting the files")
        _, second = await prompt(wire, modelled, text("And now?"))  # no second title call
        named = await store.new_session(wire)
        await set_title(wire, named, "Mine")
        await prompt(wire, named, text("Name it?"))  # the user's title: no call
        failing = await store.new_session(wire)
        await prompt(wire, failing, text("Fail?"))
        cut = await store.new_session(wire)
        await prompt(wire, cut, text("Cut?"))
        after = await listed(wire, titled=True)
        assert await wire.finish() == 0
    assert titles_shown(first) == ["How many files?"] and titles_shown(second) == []
    assert titles_shown([f for f in wire.received if f.get("params", {}).get("sessionId") == modelled]) == [
        "How many files?",
        "Counting the files",
    ]
    assert logged_titles(store, modelled) == [{"title": "Counting the files", "source": "model"}]
    assert logged_titles(store, named) == [{"title": "Mine", "source": "user"}]
    assert logged_titles(store, failing) == logged_titles(store, cut) == []
    expected = [(modelled, "Counting the files"), (named, "Mine"), (failing, "Fail?"), (cut, "Cut?")]
    assert sorted(after) == sorted(expected)
    assert "no title for session" in wire.stderr_text and "Traceback" not in wire.stderr_text
