from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.snapshot.compare import compare, digest, read_frames
from acp_agent.snapshot.frames import canonical_order, child_route, frame_route


def update(kind: str, meta: Any = None, **fields: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": "s", "update": {"sessionUpdate": kind, **fields}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def text(kind: str, value: str, meta: Any = None) -> dict[str, Any]:
    return update(kind, meta, content={"type": "text", "text": value})


TRANSCRIPT = [
    {"id": 1, "result": {"protocolVersion": 1}},
    text("agent_thought_chunk", "thin"),
    text("agent_thought_chunk", "king"),
    update("tool_call", toolCallId="c1", status="in_progress"),
    {"id": 0, "method": "session/request_permission", "params": {}},
    update("tool_call_update", toolCallId="c1", status="completed"),
    update("agent_message_chunk", content={"type": "text", "text": "child"}, _meta={"acpAgent": {"route": "s1/c1"}}),
    update("plan", entries=[]),
    text("agent_message_chunk", "DO"),
    text("agent_message_chunk", "NE"),
    {"id": 2, "result": {"stopReason": "end_turn"}},
    [{"id": 3, "error": {"code": -32602}}, {"id": 4, "error": None}],
]


def test_digest_keeps_responses_tool_calls_and_text_per_response() -> None:
    got = digest(TRANSCRIPT)
    assert got.responses == ["result", "result end_turn", "error -32602", "error None"]
    assert got.tool_calls == ["tool_call c1 in_progress", "tool_call_update c1 completed"]
    assert got.texts == [("", ""), ("thinking", "DONE"), ("", ""), ("", "")]


def test_equivalent_transcripts_compare_equal_whatever_their_formatting() -> None:
    other = [
        {"id": 1, "result": {"agentInfo": "elsewhere"}},
        text("agent_thought_chunk", "thinking"),
        update("tool_call", toolCallId="c1", status="in_progress", title="another title"),
        update("tool_call_update", toolCallId="c1", status="completed"),
        text("agent_message_chunk", "DONE"),
        {"id": 2, "result": {"stopReason": "end_turn"}},
        {"id": 3, "error": {"code": -32602, "message": "worded differently"}},
        {"id": 4, "error": {}},
    ]
    assert compare(TRANSCRIPT, other) == []


def test_differences_are_named() -> None:
    problems = compare(TRANSCRIPT, TRANSCRIPT[:3])
    assert [p.split(" differ")[0] for p in problems] == ["responses", "tool_calls", "texts"]
    assert problems[0].startswith("responses differ:\n  expected ['result', 'result end_turn'")


def child_update(kind: str, call_id: str, route: str | None, parent: str | None = None) -> dict[str, Any]:
    """A tool call (`in_progress`) or its final update (`completed`), of a child when `route` is
    given (started by the call `parent`, default: the last segment of `route`)."""
    status = "in_progress" if kind == "tool_call" else "completed"
    body: dict[str, Any] = {"sessionUpdate": kind, "toolCallId": call_id, "status": status}
    if route is not None:
        body["_meta"] = {"acpAgent": {"route": route, "parentToolCallId": parent or route.split("/")[-1]}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": body}}


def test_child_route_reads_the_attribution_in_meta() -> None:
    assert child_route(child_update("tool_call", "s1/a/c", "s1/a")) == "s1/a"
    assert child_route(child_update("tool_call", "c", None)) is None
    odd = child_update("tool_call", "c", None)
    odd["params"]["update"]["_meta"] = {"acpAgent": "odd"}
    assert child_route(odd) is None
    assert child_route({"id": 1, "result": {}}) is None


def ids(frames: list[Any]) -> list[Any]:
    return [f.get("params", {}).get("update", {}).get("toolCallId") for f in frames]


def test_concurrent_children_get_one_order_whatever_the_scheduling() -> None:
    first = [
        child_update("tool_call", "a", None),
        child_update("tool_call", "b", None),
        child_update("tool_call", "s1/b/x", "s1/b"),
        child_update("tool_call", "s1/a/y", "s1/a"),
        child_update("tool_call_update", "s1/a/y", "s1/a"),
        child_update("tool_call_update", "a", None),
        child_update("tool_call_update", "s1/b/x", "s1/b"),
        child_update("tool_call_update", "b", None),
        {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}},
    ]
    second = [first[0], first[1], first[3], first[2], first[6], first[4], first[5], first[7], first[8]]
    assert canonical_order(first) == canonical_order(second)
    # Each child's frames come just before the update that completes the call that started it.
    assert ids(canonical_order(first)) == ["a", "b", "s1/a/y", "s1/a/y", "a", "s1/b/x", "s1/b/x", "b", None]


def test_a_grandchild_comes_before_its_parent_childs_update_of_that_call() -> None:
    raw = [
        child_update("tool_call", "a", None),
        child_update("tool_call", "s1/a/g", "s1/a"),
        child_update("tool_call", "s1/a/g/x", "s1/a/g", "s1/a/g"),
        child_update("tool_call", "s1/a/h", "s1/a"),
        child_update("tool_call", "s1/a/h/y", "s1/a/h", "s1/a/h"),
        child_update("tool_call_update", "s1/a/h/y", "s1/a/h", "s1/a/h"),
        child_update("tool_call_update", "s1/a/g/x", "s1/a/g", "s1/a/g"),
        child_update("tool_call_update", "s1/a/g", "s1/a"),
        child_update("tool_call_update", "s1/a/h", "s1/a"),
        child_update("tool_call_update", "a", None),
    ]
    assert ids(canonical_order(raw)) == [
        "a", "s1/a/g", "s1/a/h", "s1/a/g/x", "s1/a/g/x", "s1/a/g", "s1/a/h/y", "s1/a/h/y", "s1/a/h", "a"
    ]  # fmt: skip


def test_a_reused_call_id_hands_each_completion_the_next_child_and_strays_go_last() -> None:
    progress = child_update("tool_call_update", "z", None)
    progress["params"]["update"]["status"] = "in_progress"  # not final: no child goes before it
    raw = [
        child_update("tool_call", "call_0", None),
        child_update("tool_call", "s1/call_0/x", "s1/call_0"),
        child_update("tool_call_update", "call_0", None),
        child_update("tool_call", "call_0", None),
        child_update("tool_call", "s1/call_0#2/x", "s1/call_0#2", "call_0"),
        child_update("tool_call_update", "call_0", None),
        child_update("tool_call", "s1/z/x", "s1/z"),  # its parent call never completes on the wire
        child_update("tool_call", "s1/z/x/w", "s1/z/x", "s1/z/x"),  # nor does its parent's
        child_update("tool_call_update", "s1/z/x", "s1/z"),
        child_update("tool_call", "s1/y/x", "s1/y"),
        progress,
    ]
    assert ids(canonical_order(raw)) == [
        "call_0", "s1/call_0/x", "call_0", "call_0", "s1/call_0#2/x", "call_0", "z",
        "s1/y/x", "s1/z/x", "s1/z/x/w", "s1/z/x",
    ]  # fmt: skip


def test_read_frames_skips_blank_lines(tmp_path: Path) -> None:
    (tmp_path / "golden.jsonl").write_text('{"id":1}\n\n[]\n')
    assert read_frames(tmp_path / "golden.jsonl") == [{"id": 1}, []]


def on(session_id: str, update: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update}}


def test_child_sessions_frames_and_what_their_parent_says_of_them_go_under_the_delegating_call() -> None:
    routes = {"top": "s1", "a": "s1/call_a", "b": "s1/call_b", "g": "s1/call_b/call_g"}
    done = {"sessionUpdate": "tool_call_update", "status": "completed"}
    raw = [
        on("top", {"sessionUpdate": "tool_call", "toolCallId": "call_a", "status": "in_progress"}),
        on("top", {"sessionUpdate": "tool_call", "toolCallId": "call_b", "status": "in_progress"}),
        on("top", {"sessionUpdate": "subagent_update", "sessionId": "b"}),
        on("top", {"sessionUpdate": "subagent_update", "sessionId": "a"}),
        on(
            "top",
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_a",
                "_meta": {"acpAgent": {"childSessionId": "a"}},
            },
        ),
        on("b", {"sessionUpdate": "tool_call", "toolCallId": "call_g", "status": "in_progress"}),
        on("b", {"sessionUpdate": "subagent_update", "sessionId": "g"}),
        on(
            "top",
            {"sessionUpdate": "session_message", "messageId": "m", "senderSessionId": "top", "recipientSessionId": "a"},
        ),
        on("g", {"sessionUpdate": "agent_message_chunk"}),
        on("b", {**done, "toolCallId": "call_g"}),
        on(
            "a",
            {"sessionUpdate": "session_message", "messageId": "n", "senderSessionId": "a", "recipientSessionId": "top"},
        ),
        on("top", {**done, "toolCallId": "call_a"}),
        on("top", {**done, "toolCallId": "call_b"}),
    ]
    assert [frame_route(frame, routes) for frame in raw] == [
        None, None, "s1/call_b", "s1/call_a", "s1/call_a", "s1/call_b", "s1/call_b/call_g", "s1/call_a",
        "s1/call_b/call_g", "s1/call_b", "s1/call_a", None, None,
    ]  # fmt: skip
    ordered = canonical_order(raw, routes)
    assert [raw.index(frame) for frame in ordered] == [0, 1, 3, 4, 7, 10, 11, 2, 5, 6, 8, 9, 12]
    # Another scheduling of the two children: the same order.
    other = [raw[i] for i in (0, 1, 3, 2, 4, 7, 5, 6, 8, 10, 9, 11, 12)]
    assert canonical_order(other, routes) == ordered
