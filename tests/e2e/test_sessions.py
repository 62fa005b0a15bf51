"""The session lifecycle through the real server process, spoken as raw NDJSON: `session/load`,
`session/list`, `session/resume` and `session/close`, with one sessions directory shared by the
servers a test starts one after the other (as an editor restarts its agent)."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from acp_agent.acp.lifecycle import LIST_PAGE_SIZE
from acp_agent.cli import PACKAGED_CONFIG, packaged
from acp_agent.session.persistence import INTERRUPTED_MESSAGE
from acp_agent.snapshot.frames import canonical_order
from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, spawn_server
from tests.unit.llm.openai_server import answer, fake_openai, stream

pytestmark = pytest.mark.anyio

ADAPTER = "acp_agent.llm.openai_compat"


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def result_of(response: Frame) -> Any:
    assert "result" in response, response
    return response["result"]


def opened(response: Frame) -> bool:
    """A `session/load` / `session/resume` answer: the session's modes and config options, as left."""
    return set(result_of(response)) == {"modes", "configOptions"}


def error_of(response: Frame) -> tuple[int, str]:
    assert "error" in response, response
    return response["error"]["code"], response["error"]["message"]


def user_chunks(*blocks: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"sessionUpdate": "user_message_chunk", "content": block} for block in blocks]


def updates_of(frames: list[Frame]) -> list[dict[str, Any]]:
    """The updates of `session/update` frames, children's frames in canonical order."""
    return [f["params"]["update"] for f in canonical_order(frames) if f.get("method") == "session/update"]


def coalesced(frames: list[Frame]) -> list[dict[str, Any]]:
    """`updates_of`, with each run of message (or thought) chunks merged into one chunk."""
    merged: list[dict[str, Any]] = []
    for update in updates_of(frames):
        kind = update["sessionUpdate"]
        if kind in ("agent_message_chunk", "agent_thought_chunk") and merged and merged[-1]["sessionUpdate"] == kind:
            last = merged[-1]
            merged[-1] = {
                **last,
                "content": {**last["content"], "text": last["content"]["text"] + update["content"]["text"]},
            }
        else:
            merged.append(update)
    return merged


class Store:
    """A sessions directory and a workspace shared by every server the test starts."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.sessions = tmp_path / "sessions"
        self.cwd = tmp_path / "work"
        self.cwd.mkdir()
        self.runs = 0

    @asynccontextmanager
    async def serve(self, script: Any) -> AsyncIterator[Wire]:
        """A scripted-model server on this store, initialized; it must exit 0 with clean stdout."""
        async with spawn_server(config=RECORD_CONFIG, env=self.env(script)) as wire:
            await wire.request("initialize", {"protocolVersion": 1})
            yield wire
            assert await wire.finish() == 0
        assert wire.garbage == []
        assert "replay: " not in wire.stderr_text and "Traceback" not in wire.stderr_text, wire.stderr_text

    def env(self, script: Any) -> dict[str, str]:
        """The environment of a server on this store whose scripted model plays `script`."""
        self.runs += 1
        path = self.tmp_path / f"script-{self.runs}.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        return {"ACP_AGENT_SCRIPT": str(path), "ACP_AGENT_SESSIONS": str(self.sessions)}

    async def new_session(self, wire: Wire, cwd: Path | None = None) -> str:
        response = await wire.request("session/new", {"cwd": str(cwd or self.cwd), "mcpServers": []})
        return str(result_of(response)["sessionId"])

    def log(self, session_id: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.path(session_id).read_text(encoding="utf-8").splitlines()]

    def path(self, session_id: str) -> Path:
        return self.sessions / session_id / "session.jsonl"

    def write(self, session_id: str, lines: list[Any]) -> Path:
        path = self.path(session_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return path


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


async def exchange(wire: Wire, method: str, params: dict[str, Any]) -> tuple[Frame, list[Frame]]:
    """Send a request; its response and the `session/update` frames that came before it."""
    start = len(wire.received)
    request_id = await wire.start(method, params)
    response = await wire.response(request_id)
    before = wire.received[start : wire.received.index(response)]
    return response, [f for f in before if f.get("method") == "session/update"]


async def prompt(wire: Wire, session_id: str, *blocks: dict[str, Any]) -> tuple[Frame, list[Frame]]:
    return await exchange(wire, "session/prompt", {"sessionId": session_id, "prompt": list(blocks)})


async def load(wire: Wire, session_id: str, cwd: Path | str) -> tuple[Frame, list[Frame]]:
    return await exchange(wire, "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []})


def turns(log: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(e["data"]["turn"], e["data"]["reason"]["kind"]) for e in log if e.get("type") == "turn/end"]


def said(frames: list[Frame]) -> str:
    """The agent's message text in these `session/update` frames."""
    updates = [f["params"]["update"] for f in frames]
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


def partial_shown(frame: Frame) -> bool:
    """The hanging model call's text reached the client."""
    update = frame.get("params", {}).get("update", {})
    return update.get("sessionUpdate") == "agent_message_chunk" and update["content"]["text"] == "partial"


# -- load: the replay, then the conversation goes on -----------------------------------------------

FIRST_RUN = {
    "s1": [
        {
            "reasoning": "Looking around first.",
            "text": "Let me check.",
            "toolCalls": [
                {"id": "call_echo", "name": "bash", "arguments": {"command": "echo HERE", "description": "Say here"}},
                {"id": "call_kid", "name": "subagent", "arguments": {"description": "Count", "prompt": "Count to 2."}},
            ],
        },
        {"text": "All done: HERE and 2."},
        {"hang": True},
    ],
    "s1/call_kid": [
        {"toolCalls": [{"id": "call_count", "name": "bash", "arguments": {"command": "echo 1; echo 2"}}]},
        {"text": "2"},
    ],
}
LINK = {"type": "resource_link", "uri": "file:///notes/plan.md", "name": "plan.md", "mimeType": "text/markdown"}


async def test_a_loaded_session_replays_what_the_user_saw_then_the_next_prompt_continues(store: Store) -> None:
    async with store.serve(FIRST_RUN) as wire:
        session_id = await store.new_session(wire)
        first_blocks = [text("Look around."), LINK]
        answered, first = await prompt(wire, session_id, *first_blocks)
        assert result_of(answered) == {"stopReason": "end_turn"}
        hanging = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("Go on.")]})
        start = len(wire.received)
        await wire.wait_for(partial_shown)
        await wire.notify("session/cancel", {"sessionId": session_id})
        cancelled = await wire.response(hanging)
        assert result_of(cancelled) == {"stopReason": "cancelled"}
        shown = wire.received[start : wire.received.index(cancelled)]
        second = [f for f in shown if f.get("method") == "session/update"]
    before = store.log(session_id)
    assert turns(before) == [(1, "completed"), (2, "aborted")]
    assert any(u["params"]["update"].get("_meta") for u in first)  # the child's tool calls were shown

    async with store.serve({"s1": [{"text": "Still here."}]}) as wire:
        loaded, replayed = await load(wire, session_id, store.cwd)
        assert opened(loaded)
        answered, third = await prompt(wire, session_id, text("Anything else?"))
    # Every replayed update came before the answer, and they are what the user saw, with the
    # user's own messages (which the editor showed itself) in their place.
    # Each block's streamed deltas come back as one chunk (the editor shows the same text).
    expected = user_chunks(*first_blocks) + coalesced(first) + user_chunks(text("Go on.")) + coalesced(second)
    assert updates_of(replayed) == expected
    assert {f["params"]["sessionId"] for f in replayed} == {session_id}
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert said(third) == "Still here."
    after = store.log(session_id)
    assert after[0] == before[0]  # the header (id, cwd, route, createdAt) is kept
    assert after[: len(before)] == before
    assert turns(after) == [(1, "completed"), (2, "aborted"), (3, "completed")]


async def test_the_model_sees_the_loaded_conversation(store: Store) -> None:
    """The real model adapter against a fake OpenAI-compatible server: the request of the first
    prompt after a load carries the conversation of the earlier server run."""
    rows: list[dict[str, Any]] = yaml.safe_load(packaged(PACKAGED_CONFIG).read_text(encoding="utf-8"))
    rows = [row for row in rows if row["id"] != "titles"]  # no title call among the model's requests
    async with fake_openai(stream(answer("Noted: PELICAN.")), stream(answer("It is PELICAN."))) as model:
        [row] = [row for row in rows if row["name"] == ADAPTER]
        row["config"].update(baseUrl=model.url, retry={"attempts": 1, "baseDelay": 0})
        config = store.tmp_path / "cordis.yml"
        config.write_text(yaml.safe_dump(rows), encoding="utf-8")
        env = {"DEEPSEEK_API_KEY": "sk-test", "ACP_AGENT_SESSIONS": str(store.sessions)}
        async with spawn_server(config=config, env=env) as wire:
            await wire.request("initialize", {"protocolVersion": 1})
            session_id = await store.new_session(wire)
            await prompt(wire, session_id, text("The codeword is PELICAN."))
        async with spawn_server(config=config, env=env) as wire:
            await wire.request("initialize", {"protocolVersion": 1})
            await load(wire, session_id, store.cwd)
            answered, _ = await prompt(wire, session_id, text("What is the codeword?"))
    assert result_of(answered) == {"stopReason": "end_turn"}
    messages = model.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    contents = [m["content"] for m in messages[1:]]
    assert contents == ["The codeword is PELICAN.", "Noted: PELICAN.", "What is the codeword?"]


async def test_a_session_open_in_the_connection_is_closed_then_loaded_again(store: Store) -> None:
    async with store.serve([{"text": "One."}, {"hang": True}, {"text": "Three."}]) as wire:
        session_id = await store.new_session(wire)
        await prompt(wire, session_id, text("one"))
        hanging = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("two")]})
        await wire.wait_for(partial_shown)
        loaded, replayed = await load(wire, session_id, store.cwd)
        assert result_of(await wire.response(hanging)) == {"stopReason": "cancelled"}
        assert opened(loaded)
        answered, _ = await prompt(wire, session_id, text("three"))
        assert result_of(answered) == {"stopReason": "end_turn"}
    shown = [u.get("content") or u.get("title") or u["used"] for u in updates_of(replayed)]
    # The title once, at the first prompt; the usage of the call that finished (120: the script's).
    assert shown == [text("one"), "one", text("One."), 120, text("two"), text("partial")]
    log = store.log(session_id)
    assert turns(log) == [(1, "completed"), (2, "aborted"), (3, "completed")]
    [aborted] = [e["data"] for e in log if e.get("type") == "turn/end" and e["data"]["turn"] == 2]
    assert aborted["reason"] == {"kind": "aborted", "reason": "the client closed the session"}


# -- resume and close ------------------------------------------------------------------------------


async def test_resume_reopens_without_replaying_and_the_conversation_goes_on(store: Store) -> None:
    async with store.serve([{"text": "First."}]) as wire:
        session_id = await store.new_session(wire)
        await prompt(wire, session_id, text("one"))
    async with store.serve([{"text": "Second."}]) as wire:
        resumed, replayed = await exchange(wire, "session/resume", {"sessionId": session_id, "cwd": str(store.cwd)})
        answered, shown = await prompt(wire, session_id, text("two"))
        # mcpServers may be left out of a resume; given, each must be a server this agent connects.
        refused = await wire.request(
            "session/resume", {"sessionId": session_id, "cwd": str(store.cwd), "mcpServers": [{"name": "x"}]}
        )
    assert opened(resumed) and replayed == []
    assert error_of(refused) == (-32602, "Invalid params: mcpServers[0]: command: Field required")
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert said(shown) == "Second."
    assert turns(store.log(session_id)) == [(1, "completed"), (2, "completed")]


async def test_a_resumed_sessions_child_takes_only_cancel_though_this_client_never_saw_it(store: Store) -> None:
    call = {"id": "call_kid", "name": "subagent", "arguments": {"description": "Count", "prompt": "Count to 2."}}
    async with store.serve({"s1": [{"toolCalls": [call]}, {"text": "Two."}], "s1/call_kid": [{"text": "2"}]}) as wire:
        session_id = await store.new_session(wire)
        answered, _ = await prompt(wire, session_id, text("Count."))
        assert result_of(answered) == {"stopReason": "end_turn"}
    [child_id] = (store.sessions / session_id / "children").read_text(encoding="utf-8").split()
    async with store.serve({}) as wire:
        assert opened(await wire.request("session/resume", {"sessionId": session_id, "cwd": str(store.cwd)}))
        refused = await wire.request("session/prompt", {"sessionId": child_id, "prompt": [text("Hi.")]})
        unknown = await wire.request("session/prompt", {"sessionId": "nobody", "prompt": [text("Hi.")]})
    message = f"Invalid params: session {child_id} is a subagent session; it accepts only session/cancel"
    assert error_of(refused) == (-32602, message)
    assert error_of(unknown) == (-32002, "Resource not found: session 'nobody'")


async def test_close_cancels_the_running_prompt_flushes_the_log_and_the_session_loads_again(store: Store) -> None:
    async with store.serve([{"hang": True}, {"text": "Back."}]) as wire:
        session_id = await store.new_session(wire)
        hanging = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("wait")]})
        await wire.wait_for(partial_shown)
        closing = await wire.start("session/close", {"sessionId": session_id})
        # Read after the close, while the close still waits for the turn to end: refused (the
        # prompt neither queued nor logged).
        switch = await wire.start("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
        late = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("too late")]})
        assert error_of(await wire.response(late)) == (-32002, f"Resource not found: session {session_id!r}")
        assert error_of(await wire.response(switch)) == (-32002, f"Resource not found: session {session_id!r}")
        assert result_of(await wire.response(closing)) == {}
        assert result_of(await wire.response(hanging)) == {"stopReason": "cancelled"}
        # Flushed and closed while the server still runs.
        log = store.log(session_id)
        assert log[-1]["data"] == {"turn": 1, "reason": {"kind": "aborted", "reason": "the client closed the session"}}
        # Forgotten: the session is unknown until it is loaded again.
        gone = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("hello?")]})
        assert error_of(gone) == (-32002, f"Resource not found: session {session_id!r}")
        assert error_of(await wire.request("session/close", {"sessionId": session_id}))[0] == -32002
        await wire.notify("session/cancel", {"sessionId": session_id})
        loaded, replayed = await load(wire, session_id, store.cwd)
        assert opened(loaded)
        answered, _ = await prompt(wire, session_id, text("again"))
    assert [u.get("content") or u.get("title") for u in updates_of(replayed)] == [text("wait"), "wait", text("partial")]
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert turns(store.log(session_id)) == [(1, "aborted"), (2, "completed")]


async def test_a_loaded_session_whose_route_is_taken_gets_the_next_one(store: Store) -> None:
    async with store.serve([{"text": "Old."}]) as wire:
        old = await store.new_session(wire)
        await prompt(wire, old, text("old"))
    assert store.log(old)[0]["route"] == "s1"
    async with store.serve({"s1": [{"text": "From s1."}], "s2": [{"text": "From s2."}]}) as wire:
        new = await store.new_session(wire)  # s1 in this process
        await load(wire, old, store.cwd)  # its s1 is taken: s2
        _, on_old = await prompt(wire, old, text("which?"))
        _, on_new = await prompt(wire, new, text("which?"))
        newest = await store.new_session(wire)
    assert (said(on_old), said(on_new)) == ("From s2.", "From s1.")
    assert [store.log(i)[0]["route"] for i in (old, new, newest)] == ["s2", "s1", "s3"]


# -- the errors ------------------------------------------------------------------------------------


def header(session_id: str, cwd: Path | str | None, **fields: Any) -> dict[str, Any]:
    where = {"cwd": str(cwd)} if cwd else {}
    return {"type": "session", "version": 0, "id": session_id, "createdAt": 1_000, **where, **fields}


def turn(n: int, seq: int, time: int, message: str) -> list[dict[str, Any]]:
    """A whole turn: the user's message and a completed end, no model call."""
    return [
        {"type": "turn/start", "seq": seq, "time": time, "data": {"turn": n, "trigger": {"kind": "message"}}},
        {
            "type": "user/message",
            "seq": seq + 1,
            "time": time,
            "data": {"content": [text(message)], "source": {"kind": "user"}},
        },
        {"type": "turn/end", "seq": seq + 2, "time": time, "data": {"turn": n, "reason": {"kind": "completed"}}},
    ]


async def test_load_errors_name_the_session_and_what_is_wrong(store: Store) -> None:
    cwd = store.cwd
    store.write("parent", [header("parent", cwd, route="s1"), *turn(1, 0, 2_000, "hi")])
    store.write("child", [header("child", cwd, parentSession="parent", route="s1/call_x"), *turn(1, 0, 2_000, "kid")])
    damaged = store.write("damaged", [header("damaged", cwd), *turn(1, 0, 2_000, "x"), *turn(2, 3, 3_000, "y")])
    lines = damaged.read_text().splitlines()
    lines[2] = "{not json"
    damaged.write_text("\n".join(lines) + "\n")
    store.write("future", [header("future", cwd, version=9)])
    # A hand-made loop: a log elsewhere claims the parent's id and names the child as its parent.
    store.write("kid", [header("kid", cwd, parentSession="parent", route="s1/call_k"), *turn(1, 0, 2_000, "k")])
    store.write("alias", [header("parent", cwd, parentSession="kid"), *turn(1, 0, 2_000, "loop")])
    store.write("sick-parent", [header("sick-parent", cwd, route="s1"), *turn(1, 0, 2_000, "hi")])
    sick_header = header("sick-child", cwd, parentSession="sick-parent")
    sick_child = store.write("sick-child", [sick_header, *turn(1, 0, 2_000, "a"), *turn(2, 3, 2_000, "b")])
    sick_child.write_text(sick_child.read_text().replace('"seq": 1,', '"seq": 7,', 1))
    async with store.serve([]) as wire:

        def params(session_id: str, **extra: Any) -> dict[str, Any]:
            return {"sessionId": session_id, "cwd": str(cwd), "mcpServers": [], **extra}

        for method in ("session/load", "session/resume"):
            unknown = await wire.request(method, params("nope"))
            assert error_of(unknown) == (-32002, "Resource not found: session 'nope'")
        assert error_of(await wire.request("session/load", params("../etc")))[0] == -32002
        code, message = error_of(await wire.request("session/load", params("parent", cwd="/elsewhere")))
        assert (code, message) == (
            -32602,
            f"Invalid params: cwd '/elsewhere' is not the cwd of session 'parent', which was created in {str(cwd)!r}",
        )
        code, message = error_of(await wire.request("session/load", params("parent", cwd="work")))
        assert code == -32602 and "cwd must be an absolute path" in message
        code, message = error_of(await wire.request("session/load", params("parent", additionalDirectories=["/x"])))
        assert code == -32602 and "additionalDirectories" in message
        code, message = error_of(await wire.request("session/load", {"sessionId": "parent", "cwd": str(cwd)}))
        assert code == -32602 and "mcpServers" in message
        code, message = error_of(await wire.request("session/load", params("child")))
        assert (code, message) == (
            -32602,
            "Invalid params: session 'child' is a subagent's session; load its top-level session 'parent' instead",
        )
        code, message = error_of(await wire.request("session/load", params("damaged")))
        assert code == -32603
        assert message.startswith(
            f"Internal error: cannot load session 'damaged': session log {damaged} is damaged at line 3: "
        )
        code, message = error_of(await wire.request("session/load", params("future")))
        assert (code, message) == (
            -32603,
            "Internal error: cannot load session 'future': unsupported session log version 9 (supported: 0)",
        )
        # A child's damaged log does not keep its thread from loading: the child shows as damaged.
        loaded, replayed = await load(wire, "sick-parent", cwd)
        assert opened(loaded)
        shown = [u["content"]["text"] for u in updates_of(replayed) if u["sessionUpdate"] == "agent_message_chunk"]
        assert shown[-1].startswith(
            f"[the log of subagent sick-child could not be read: session log {sick_child} is damaged at line 3: "
        )
        assert "its subagent's log cannot be loaded" in wire.stderr_text
        await wire.request("session/close", {"sessionId": "sick-parent"})
        # A directory copied or renamed by hand is not opened as the session its log names.
        code, message = error_of(await wire.request("session/load", params("alias")))
        assert (code, message) == (
            -32603,
            f"Internal error: cannot open session 'alias': the log {store.path('alias')} belongs to session"
            " 'parent', not to 'alias': a session directory copied or renamed by hand is not opened under"
            " another name (rename it back to 'parent')",
        )
        # A refused load leaves nothing open, and the server goes on.
        assert error_of(await wire.request("session/close", {"sessionId": "parent"}))[0] == -32002
        assert opened(await wire.request("session/load", params("parent")))
    assert damaged.read_text().splitlines()[2] == "{not json"  # never rewritten


async def test_a_torn_tail_is_repaired_written_back_and_the_session_continues(store: Store) -> None:
    slow = {"id": "call_slow", "name": "bash", "arguments": {"command": "echo hi"}}
    async with store.serve([{"text": "One."}, {"toolCalls": [slow]}, {"text": "Two."}]) as wire:
        session_id = await store.new_session(wire)
        await prompt(wire, session_id, text("one"))
        await prompt(wire, session_id, text("two"))
    # The process died in turn 2: the file ends inside the line after the tool call.
    path = store.path(session_id)
    lines = path.read_text().splitlines(keepends=True)
    [call] = [i for i, line in enumerate(lines) if '"tool/call"' in line]
    path.write_text("".join(lines[: call + 1]) + lines[call + 1][:25])
    async with store.serve([{"text": "Three."}]) as wire:
        loaded, replayed = await load(wire, session_id, store.cwd)
        answered, _ = await prompt(wire, session_id, text("three"))
    assert opened(loaded) and result_of(answered) == {"stopReason": "end_turn"}
    updates = updates_of(replayed)
    assert updates[-2]["sessionUpdate"] == "tool_call" and updates[-2]["toolCallId"] == "call_slow"
    assert updates[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_slow",
        "status": "failed",
        "content": [{"type": "content", "content": text(f"Error: {INTERRUPTED_MESSAGE}")}],
    }
    log = store.log(session_id)  # written back whole: every line parses
    assert turns(log) == [(1, "completed"), (2, "interrupted"), (3, "completed")]
    assert [e["seq"] for e in log[1:]] == list(range(len(log) - 1))


async def test_a_log_without_a_cwd_takes_the_clients(store: Store) -> None:
    store.write("old", [header("old", None, route="s1"), *turn(1, 0, 2_000, "hello")])
    async with store.serve([]) as wire:
        loaded, replayed = await load(wire, "old", store.cwd)
    assert opened(loaded)
    assert updates_of(replayed) == [
        *user_chunks(text("hello")),
        {"sessionUpdate": "session_info_update", "title": "hello"},
    ]
    assert store.log("old")[0]["cwd"] == str(store.cwd)


# -- list ------------------------------------------------------------------------------------------

LONG = "Refactor the session store so that listing reads only what it shows, " * 3


async def test_list_shows_prompted_top_level_sessions_newest_first_with_a_cwd_filter(
    store: Store, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    script = {
        "s1": [{"text": "ok"}],
        "s2": [
            {"toolCalls": [{"id": "call_kid", "name": "subagent", "arguments": {"description": "d", "prompt": "p"}}]},
            {"text": "ok"},
        ],
        "s2/call_kid": [{"text": "kid"}],
        "s3": [{"text": "ok"}],
    }
    async with store.serve(script) as wire:
        first = await store.new_session(wire)
        await prompt(wire, first, text(f"  {LONG}\n"))
        second = await store.new_session(wire)
        await prompt(wire, second, text("Second"), LINK)
        elsewhere = await store.new_session(wire, other)
        await prompt(wire, elsewhere, LINK)
        await store.new_session(wire)  # never prompted: not listed
        everything = result_of(await wire.request("session/list", {}))
        here = result_of(await wire.request("session/list", {"cwd": str(store.cwd)}))
        there = result_of(await wire.request("session/list", {"cwd": f"{other}/"}))
        nowhere = result_of(await wire.request("session/list", {"cwd": "/no/such/dir"}))
        relative = await wire.request("session/list", {"cwd": "work"})
        for cursor in ("garbage", *(base64.urlsafe_b64encode(raw).decode() for raw in (b'["x", 1]', b"7"))):
            code, message = error_of(await wire.request("session/list", {"cursor": cursor}))
            assert (code, message) == (-32602, f"Invalid params: cursor {cursor!r} is not a cursor this agent gave")
    assert [s["sessionId"] for s in everything["sessions"]] == [elsewhere, second, first]
    assert "nextCursor" not in everything
    title = " ".join(LONG.split())[:79].rstrip() + "…"
    assert everything["sessions"][1:] == [
        {"sessionId": second, "cwd": str(store.cwd), "title": "Second", "updatedAt": iso_of_last(store, second)},
        {"sessionId": first, "cwd": str(store.cwd), "title": title, "updatedAt": iso_of_last(store, first)},
    ]
    assert len(title) == 80
    assert everything["sessions"][0]["title"] == "plan.md"  # no text: the link's name
    assert here == {"sessions": everything["sessions"][1:]}
    assert there == {"sessions": everything["sessions"][:1]}
    assert nowhere == {"sessions": []}
    assert error_of(relative)[0] == -32602


def iso_of_last(store: Store, session_id: str) -> str:
    return utc(store.log(session_id)[-1]["time"])


def utc(epoch_ms: int) -> str:
    """ISO 8601 in UTC, to the millisecond, as `updatedAt` is written."""
    moment = datetime.fromtimestamp(epoch_ms // 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


async def test_list_pages_with_an_opaque_cursor_that_survives_new_activity(store: Store, tmp_path: Path) -> None:
    other = tmp_path / "other"
    count = 2 * LIST_PAGE_SIZE + 20
    expected = []
    for n in range(count):
        session_id = f"session-{n:03d}"
        time = 1_700_000_000_000 + (n // 2) * 1_000  # pairs share a time: the id breaks the tie
        store.write(session_id, [header(session_id, store.cwd), *turn(1, 0, time, f"task {n}")])
        expected.append((-time, session_id))
    store.write("elsewhere", [header("elsewhere", other), *turn(1, 0, 1_800_000_000_000, "far")])
    torn = store.path("session-000")
    torn.write_text(torn.read_text() + '{"type":"turn/start","seq":3,"ti')  # the last whole line counts
    (store.sessions / "garbage").mkdir()
    (store.sessions / "garbage" / "session.jsonl").write_text("not a header\n")
    order = [session_id for _, session_id in sorted(expected)]
    async with store.serve([]) as wire:
        pages: list[dict[str, Any]] = []
        params: dict[str, Any] = {"cwd": str(store.cwd)}
        while True:
            page = result_of(await wire.request("session/list", params))
            pages.append(page)
            if len(pages) == 1:  # activity between two pages moves a session to the top of page 1
                store.write("fresh", [header("fresh", store.cwd), *turn(1, 0, 1_900_000_000_000, "new")])
            if "nextCursor" not in page:
                break
            params = {"cwd": str(store.cwd), "cursor": page["nextCursor"]}
    assert "not listing" in wire.stderr_text and "garbage" in wire.stderr_text
    assert [len(page["sessions"]) for page in pages] == [LIST_PAGE_SIZE, LIST_PAGE_SIZE, 20]
    assert [s["sessionId"] for page in pages for s in page["sessions"]] == order
    assert pages[-1]["sessions"][-1]["updatedAt"] == utc(1_700_000_000_000)
    assert pages[0]["sessions"][0]["title"] == f"task {count - 2}"  # the older id of the newest pair


async def test_a_copied_or_renamed_session_directory_is_refused_and_nothing_is_written(store: Store) -> None:
    """A log is its directory's: loaded under another name (`cp -r A copy`, `mv A renamed`) it
    is refused, naming both, and no file is created, truncated or rewritten."""
    async with store.serve([{"text": "One."}]) as wire:
        session_id = await store.new_session(wire)
        await prompt(wire, session_id, text("one"))
    original = store.sessions / session_id
    shutil.copytree(original, store.sessions / "copy")
    with open(original / "session.jsonl", "a", encoding="utf-8") as log:
        log.write('{"type":"turn/st')  # a torn tail, which a load of the copy must not repair in A's file
    before = {path: path.read_bytes() for path in store.sessions.rglob("*") if path.is_file()}
    async with store.serve([]) as wire:
        for method in ("session/load", "session/resume"):
            params = {"sessionId": "copy", "cwd": str(store.cwd), "mcpServers": []}
            code, message = error_of(await wire.request(method, params))
            assert code == -32603 and message.startswith("Internal error: cannot open session 'copy': the log ")
            assert f"belongs to session {session_id!r}, not to 'copy'" in message
    after = {
        path: path.read_bytes() for path in store.sessions.rglob("*") if path.is_file() and ".index" not in path.parts
    }
    assert after == {path: data for path, data in before.items() if ".index" not in path.parts}
    (store.sessions / "copy").rename(store.sessions / "renamed")
    shutil.rmtree(original)
    async with store.serve([]) as wire:
        code, message = error_of((await load(wire, "renamed", store.cwd))[0])
        assert code == -32603 and f"(rename it back to {session_id!r})" in message
    assert not original.exists()  # nothing made under the id the log names
