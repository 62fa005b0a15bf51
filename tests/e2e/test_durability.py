"""Durability through the real server process: what a kill -9 leaves on disk is what the client
saw, and one session is open in one process at a time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_sessions import (
    Store,
    error_of,
    load,
    opened,
    partial_shown,
    prompt,
    result_of,
    said,
    text,
    turns,
    updates_of,
)
from tests.e2e.wire import RECORD_CONFIG, Wire, spawn_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


LONG_TEXT = "".join(f"word{i} " for i in range(12_000))  # about 100 KiB of deltas in the log


@asynccontextmanager
async def killed_server(store: Store, script: Any) -> AsyncIterator[Wire]:
    """A scripted server on the store that the block ends with kill -9 (whatever it was doing)."""
    async with spawn_server(config=RECORD_CONFIG, env=store.env(script)) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        try:
            yield wire
        finally:
            wire.process.kill()
            await wire.process.wait()


def user_texts(updates: list[dict[str, Any]]) -> list[str]:
    return [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"]


def agent_text(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


@pytest.mark.parametrize(
    "first_answer", [pytest.param("Hello there.", id="short"), pytest.param(LONG_TEXT, id="past 64 KiB")]
)
async def test_a_kill_9_mid_turn_loses_nothing_the_client_saw(store: Store, first_answer: str) -> None:
    """Every event was handed to the OS before the update it caused was written: after kill -9,
    the next process's load shows the completed turn, the killed turn's user message and what it
    had streamed, the turn is interrupted, and the thread goes on."""
    async with killed_server(store, [{"text": first_answer}, {"hang": True}]) as wire:
        session_id = await store.new_session(wire)
        answered, _ = await prompt(wire, session_id, text("First."))
        assert result_of(answered) == {"stopReason": "end_turn"}
        await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Second.")]})
        await wire.wait_for(partial_shown)
    async with store.serve([{"text": "Still here."}]) as wire:
        loaded, replayed = await load(wire, session_id, store.cwd)
        assert opened(loaded)
        answered, third = await prompt(wire, session_id, text("Third."))
    updates = updates_of(replayed)
    assert user_texts(updates) == ["First.", "Second."]
    assert agent_text(updates) == first_answer + "partial"
    assert result_of(answered) == {"stopReason": "end_turn"} and said(third) == "Still here."
    assert turns(store.log(session_id)) == [(1, "completed"), (2, "interrupted"), (3, "completed")]


async def test_a_mode_change_answered_is_on_disk(store: Store) -> None:
    async with killed_server(store, []) as wire:
        session_id = await store.new_session(wire)
        changed = await wire.request("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
        assert result_of(changed) == {}
    async with store.serve([]) as wire:
        loaded, _ = await load(wire, session_id, store.cwd)
    assert result_of(loaded)["modes"]["currentModeId"] == "plan"


async def test_a_session_is_open_in_one_process_at_a_time(store: Store) -> None:
    """A second server's load waits for the first to let go (up to 3 s), then answers -32603;
    it gets the session once the first closes it, and the thread goes on there."""
    async with store.serve([{"text": "One."}]) as first, store.serve([{"text": "Two."}]) as second:
        session_id = await store.new_session(first)
        await prompt(first, session_id, text("one"))
        params = {"sessionId": session_id, "cwd": str(store.cwd), "mcpServers": []}
        code, message = error_of(await second.request("session/load", params))
        assert code == -32603 and "open in another process" in message, message
        waiting = await second.start("session/resume", params)
        await first.request("session/close", {"sessionId": session_id})
        assert opened(await second.response(waiting))
        answered, shown = await prompt(second, session_id, text("two"))
        assert said(shown) == "Two."
    assert turns(store.log(session_id)) == [(1, "completed"), (2, "completed")]
