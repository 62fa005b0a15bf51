"""The tree view each snapshot starts with (the demo prints its prompts), read from both directions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_agent.snapshot.normalize import normalize_run
from acp_agent.snapshot.result import RunResult


def update(kind: str, **fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"update": {"sessionUpdate": kind, **fields}}}


def request(request_id: int, method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def summary(
    frames: list[Any], sent: list[Any], after: list[tuple[int, ...]], logs: dict[str, list[Any]] | None = None
) -> list[str]:
    encode = lambda item: item if isinstance(item, str) else json.dumps(item)  # noqa: E731
    result = RunResult(
        [encode(f) for f in frames], "", logs or {}, Path("/cwd"), [encode(s) for s in sent], 0, [], sent_after=after
    )
    return normalize_run(result).summary


def test_every_request_shows_with_what_the_user_answered_and_where_the_client_cancelled() -> None:
    blocks = [{"type": "text", "text": "go"}, {"type": "resource", "resource": {"uri": "file:///a"}},
              {"type": "resource_link", "uri": "file:///b"}, {"type": "image"}]  # fmt: skip
    sent = [
        request(1, "initialize"),
        request(2, "session/prompt", prompt=blocks),
        {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {}},
        {"jsonrpc": "2.0", "method": "no/such/notification"},
        "garbage",
    ]
    frames = [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        update("tool_call", toolCallId="c", title="ls", status="pending"),
        request(7, "session/request_permission", toolCall={"toolCallId": "c"}),
        update(
            "tool_call_update",
            toolCallId="c",
            content=[{"type": "terminal", "terminalId": "t"}, {"type": "diff", "path": "/cwd/a"}],
        ),
        update("agent_message_chunk", content={"type": "text", "text": "one\n\ntwo"}),
        {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "id": "other", "error": "odd"},
    ]
    assert summary(frames, sent, [(), (0,), (2,), (4,), (5,), (5,)]) == [
        "initialize: ok",
        "",
        "> go [resource file:///a] [link file:///b] [image]",
        "",
        "  tool c: ls [pending] (asked: allow_once)",
        "      [terminal t]",
        "      [diff {{cwd}}/a]",
        "  agent: one",
        "",
        "         two",
        "  (the client cancels)",
        "  stop reason: cancelled",
        "",
        "no/such/notification: a notification, no answer",
        "'garbage': error -32700: Parse error",
        '(a line answered with id "other"): error None: None',
    ]


def test_a_question_the_agent_withdrew_says_so_on_its_call() -> None:
    sent = [request(1, "session/prompt", prompt=[{"type": "text", "text": "go"}])]
    frames = [
        update("tool_call", toolCallId="q", title="Ask: which?", status="in_progress"),
        request(4, "elicitation/create", toolCallId="q"),
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}},  # nothing it asked
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 4}},
        update("tool_call_update", toolCallId="q", status="failed"),
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}},
    ]
    shown = summary(frames, sent, [()])[2:4]
    assert shown == ["  tool q: Ask: which? [failed] (asked: withdrawn)", "  stop reason: cancelled"]


def test_a_load_shows_what_it_replayed_under_its_line() -> None:
    sent = [request(1, "session/load", sessionId="aaaaaaaa-0000-4000-8000-000000000001")]
    frames = [
        update("user_message_chunk", content={"type": "text", "text": "look:"}),
        update("user_message_chunk", content={"type": "image", "data": "AA=="}),
        update(
            "tool_call",
            toolCallId="c",
            title="ls",
            status="completed",
            content=[{"type": "content", "content": {"text": "a.txt"}}],
        ),
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ]
    assert summary(frames, sent, [()]) == [
        "session/load: ok",
        "  user: look: [image]",
        "  tool c: ls [completed]",
        "      a.txt",
    ]


def test_a_prompt_to_a_child_session_says_so_and_a_cancel_between_prompts_stands_alone() -> None:
    """A cancel of either kind sent between prompts is a line of its own, not one of the next prompt's."""
    top, child = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
    logs: dict[str, list[Any]] = {
        "s1": [{"type": "session", "id": top}],
        "s1/c1": [{"type": "session", "id": child, "parentSession": top}],
    }
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": child}}
    sent = [
        request(1, "session/prompt", sessionId=child, prompt=[{"type": "text", "text": "again"}]),
        cancel,
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": top}},
        request(2, "session/prompt", sessionId=top, prompt=[{"type": "text", "text": "go"}]),
        cancel,
    ]
    frames = [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "a subagent session"}},
        {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}},
    ]
    assert summary(frames, sent, [(), (0,), (0,), (0,), (0,)], logs) == [
        "> again  (to the child session {{sessionId:2}})",
        "",
        "  error -32602: a subagent session",
        "",
        "(the client cancels a child session that has ended)",
        "(the client cancels)",
        "",
        "> go",
        "",
        "  (the client cancels a child session that has ended)",
        "  stop reason: end_turn",
        "",
    ]
