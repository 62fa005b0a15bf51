"""`session/delete` through the real server process: what goes, what stays, what is refused.
Frames are raw NDJSON, each held against the official package's models."""

from __future__ import annotations

import os
from typing import Any

import pytest
from acp import schema as official

from tests.e2e.test_sessions import Store, error_of, opened, prompt, result_of, store, text  # noqa: F401 (fixture)
from tests.e2e.wire import Wire

pytestmark = pytest.mark.anyio

CHILD_CALL = {"id": "call_kid", "name": "subagent", "arguments": {"description": "Count", "prompt": "Count to 2."}}


async def delete(wire: Wire, session_id: str) -> dict[str, object]:
    params = official.DeleteSessionRequest(session_id=session_id).model_dump(by_alias=True, exclude_none=True)
    return await wire.request("session/delete", params)


async def listed(wire: Wire, *, titled: bool = False) -> list[Any]:
    """The ids `session/list` shows (with their titles: `titled`)."""
    sessions = result_of(await wire.request("session/list", {}))["sessions"]
    return [(s["sessionId"], s.get("title")) if titled else s["sessionId"] for s in sessions]


async def test_delete_closes_the_open_session_and_removes_its_log_and_its_childrens(store: Store) -> None:
    script = {
        "s1": [{"toolCalls": [CHILD_CALL]}, {"text": "Two."}],
        "s1/call_kid": [{"text": "2"}],
        "s2": [{"text": "Kept."}, {"text": "Yes."}],
    }
    async with store.serve(script) as wire:
        initialized = wire.responses()[0]
        doomed = await store.new_session(wire)
        await prompt(wire, doomed, text("Count."))
        kept = await store.new_session(wire)
        await prompt(wire, kept, text("Keep me."))
        [child] = (store.sessions / doomed / "children").read_text(encoding="utf-8").split()
        before = await listed(wire)
        deleted = await delete(wire, doomed)  # open here: closed first
        after = await listed(wire)
        gone = await wire.request("session/prompt", {"sessionId": doomed, "prompt": [text("Hello?")]})
        again = await delete(wire, doomed)
        unknown = await delete(wire, "nobody")
        refused = await delete(wire, kept + "/..")
        answered, _ = await prompt(wire, kept, text("Still here?"))
    capabilities = official.InitializeResponse.model_validate(result_of(initialized)).agent_capabilities
    assert capabilities is not None and capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.delete is not None
    assert official.DeleteSessionResponse.model_validate(result_of(deleted)) == official.DeleteSessionResponse()
    assert sorted(before) == sorted([doomed, kept]) and after == [kept]
    assert not (store.sessions / doomed).exists() and not (store.sessions / child).exists()
    assert sorted(os.listdir(store.sessions)) == sorted([".index", kept])  # nothing else touched
    assert error_of(gone) == (-32002, f"Resource not found: session {doomed!r}")
    assert error_of(again) == (-32002, f"Resource not found: session {doomed!r}")
    assert error_of(unknown) == (-32002, "Resource not found: session 'nobody'")
    assert error_of(refused)[0] == -32002
    assert result_of(answered) == {"stopReason": "end_turn"}


async def test_a_stored_session_is_deleted_without_being_opened_and_a_child_is_refused(store: Store) -> None:
    script = {"s1": [{"toolCalls": [CHILD_CALL]}, {"text": "Two."}], "s1/call_kid": [{"text": "2"}]}
    async with store.serve(script) as wire:
        session_id = await store.new_session(wire)
        await prompt(wire, session_id, text("Count."))
    [child] = (store.sessions / session_id / "children").read_text(encoding="utf-8").split()
    store.write("damaged", ["not a header"])
    (store.sessions / "no-log").mkdir()
    async with store.serve({}) as wire:
        damaged = await delete(wire, "damaged")  # a header that does not read back: it still goes
        no_log = await delete(wire, "no-log")
        by_child = await delete(wire, child)
        assert opened(await wire.request("session/resume", {"sessionId": session_id, "cwd": str(store.cwd)}))
        open_child = await delete(wire, child)  # a child this client may know: it takes only cancel
        deleted = await delete(wire, session_id)
        after = await listed(wire)
    message = f"Invalid params: session {child!r} is a subagent's session; delete its top-level session {session_id!r}"
    assert error_of(by_child) == (-32602, message)
    assert error_of(open_child) == (
        -32602,
        f"Invalid params: session {child} is a subagent session; it accepts only session/cancel",
    )
    assert result_of(damaged) == {} and error_of(no_log)[0] == -32002
    assert result_of(deleted) == {} and after == []
    assert sorted(os.listdir(store.sessions)) == [".index", "no-log"]
