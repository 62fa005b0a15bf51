"""`_session/steering` through the real server, spoken as raw NDJSON: a message typed while the
agent works joins the running turn; while idle it starts a turn, or is refused when the client
asks so; either way it is logged as the user's and replayed by a load."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_sessions import Store, load, result_of, store, text, updates_of  # noqa: F401 (fixture)
from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, spawn_server

pytestmark = pytest.mark.anyio

SCRIPT = [
    {"toolCalls": [{"id": "call_touch", "name": "bash", "arguments": {"command": "touch ran"}}]},
    {"text": "Done, with -f as you said."},
    {"text": "Again."},
]


async def steer(wire: Wire, session_id: str, said: str, **extra: Any) -> Frame:
    return await wire.request("_session/steering", {"sessionId": session_id, "prompt": [text(said)], **extra})


def meta(frame: Frame) -> Any:
    update = (frame.get("params") or {}).get("update") or {}
    return (update.get("_meta") or {}).get("acpAgent") if update.get("sessionUpdate") == "session_info_update" else None


def turn_marker(frame: Frame) -> str | None:
    """`started` / `ended` for the updates that open and close a turn no prompt started."""
    return (meta(frame) or {}).get("turn")


def asked_permission(frame: Frame) -> bool:
    return frame.get("method") == "session/request_permission"


async def test_a_steering_message_joins_the_running_turn_or_starts_one_when_idle(store: Store) -> None:
    asked: list[Frame] = []

    async def leave_unanswered(request: Frame) -> None:
        asked.append(request)

    env = {**store.env(SCRIPT), "ACP_AGENT_PERMISSIONS": "ask"}
    async with spawn_server(config=RECORD_CONFIG, env=env) as wire:
        wire.answer = leave_unanswered
        initialized = await wire.request("initialize", {"protocolVersion": 1})
        session_id = await store.new_session(wire)
        prompt = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Touch it.")]})
        await wire.wait_for(asked_permission)  # the turn waits for the user: it runs
        injected = await steer(wire, session_id, "Use -f.")
        [request] = asked
        await wire.send(
            {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
            }
        )
        answered = await wire.response(prompt)
        refused = await steer(wire, session_id, "Now?", idleBehavior="promptRequired")
        started = await steer(wire, session_id, "Once more.")
        await wire.wait_for(lambda f: (f.get("params") or {}).get("update", {}).get("content") == text("Again."))
        ended = await wire.wait_for(lambda f: turn_marker(f) == "ended")  # no prompt answers that turn
        unknown = await steer(wire, "nobody", "Hi.")
        empty = await wire.request("_session/steering", {"sessionId": session_id, "prompt": []})
    assert result_of(initialized)["_meta"] == {"steering": {"supported": True}}
    assert result_of(injected) == {"outcome": "injected"}
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert result_of(refused) == {"outcome": "promptRequired", "reason": "noRunningTurn"}
    assert result_of(started) == {"outcome": "startedNewTurn"}
    assert unknown["error"]["code"] == -32002 and empty["error"]["code"] == -32602
    markers = [meta(f) for f in wire.received if turn_marker(f)]
    assert markers == [{"turn": "started", "trigger": "steer"}, {"turn": "ended", "stopReason": "end_turn"}]
    assert meta(ended) == markers[-1]
    log = store.log(session_id)
    said = [
        (e["data"]["content"][0]["text"], e["data"]["source"]["kind"]) for e in log if e.get("type") == "user/message"
    ]
    assert said == [("Touch it.", "user"), ("Use -f.", "steer"), ("Once more.", "steer")]
    # The steering message came after the tool's result, before the call that answered.
    kinds = [e["type"] for e in log if e.get("type") in ("tool/result", "user/message", "assistant/message")]
    assert kinds == [
        "user/message",
        "assistant/message",
        "tool/result",
        "user/message",
        "assistant/message",
        "user/message",
        "assistant/message",
    ]
    async with store.serve({}) as wire:
        _, replayed = await load(wire, session_id, store.cwd)
    users = [u["content"]["text"] for u in updates_of(replayed) if u["sessionUpdate"] == "user_message_chunk"]
    assert users == ["Touch it.", "Use -f.", "Once more."]
