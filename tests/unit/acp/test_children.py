"""A child agent as a child session (`acp/children.py`) and, for a client without them, its
answer on the card of the call that started it (`UpdateMapper`): the frames, held against the
protocol's unstable JSON Schema when it is present."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from acp_agent.acp.children import ChildSession, Frame
from acp_agent.acp.schema import SessionNotification
from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.session.content import (
    BlockEnd,
    BlockStart,
    ImageContent,
    TextBlock,
    TextContent,
    TextDelta,
    Usage,
)
from acp_agent.session.events import (
    AssistantChunkData,
    AssistantChunkEvent,
    AssistantMessageData,
    AssistantMessageEvent,
    SessionEvent,
    Source,
    ToolError,
    ToolResultData,
    TurnAborted,
    TurnCompleted,
    TurnEndData,
    TurnEndEvent,
    TurnFailed,
    TurnMaxSteps,
    UserMessageData,
    UserMessageEvent,
)
from acp_agent.session.titles import brief
from tests.paths import ACP_UNSTABLE_SCHEMA


def child(task: Any = None) -> ChildSession:
    return ChildSession("kid", "mom", "s1/call_kid", "/work", task)


def wire(frames: list[Frame]) -> list[dict[str, Any]]:
    """The frames as they go out (session id and update), each valid per the unstable schema."""
    out = []
    for session_id, update in frames:
        params = SessionNotification(session_id=session_id, update=update).dump()
        defs = json.loads(ACP_UNSTABLE_SCHEMA.read_text(encoding="utf-8"))["$defs"]
        Draft202012Validator({"$defs": defs, "$ref": "#/$defs/SessionNotification"}).validate(params)
        out.append(params)
    return out


def message(*content: Any) -> SessionEvent:
    data = UserMessageData(content=list(content), source=Source(kind="user"))
    return UserMessageEvent(seq=0, time=0, data=data)


def model_call(usage: Usage | None, text: str = "x") -> SessionEvent:
    data = AssistantMessageData(turn=1, step=1, content=[TextBlock(text=text)], usage=usage)
    return AssistantMessageEvent(seq=0, time=0, data=data)


def turn_end(reason: Any) -> SessionEvent:
    return TurnEndEvent(seq=0, time=0, data=TurnEndData(turn=1, reason=reason))


def result(text: str, *, error: bool = False) -> ToolResultData:
    return ToolResultData(
        turn=1,
        step=1,
        call_id="call_kid",
        content=[TextContent(text=text)],
        is_error=error,
        error=ToolError(code="subagent_error", message=text) if error else None,
    )


def test_the_announce_names_the_call_and_cuts_the_task_at_a_word() -> None:
    task = {"description": "Count the files", "prompt": "word " * 60}
    [frame] = wire([child(task).announce()])
    assert frame == {
        "sessionId": "mom",
        "update": {
            "sessionUpdate": "subagent_update",
            "sessionId": "kid",
            "title": "Count the files",
            "description": ("word " * 40).rstrip() + "…",
            "cwd": "/work",
            "capabilities": {"cancel": {}},
            "state": {"state": "running"},
        },
    }
    # A call whose input is not the delegation tool's: the client picks a presentation.
    assert wire([child("not an object").announce()])[0]["update"].keys() == {
        "sessionUpdate", "sessionId", "cwd", "capabilities", "state"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("exactly ten", 11, "exactly ten"),
        ("two words here", 7, "two…"),  # cut inside "words": back to the word before
        ("two words here", 10, "two words…"),  # cut right after a word
        ("unbreakable", 4, "unbr…"),  # one word: cut inside it
    ],
)
def test_brief(text: str, limit: int, expected: str) -> None:
    assert brief(text, limit) == expected


def test_the_task_goes_out_on_both_sessions_once_and_usage_adds_up() -> None:
    kid = child()
    frames = wire(kid.see(message(TextContent(text="Do it."), ImageContent(data="aGk=", mime_type="image/png"))))
    content = [{"type": "text", "text": "Do it."}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]
    assert frames == [
        {
            "sessionId": "mom",
            "update": {
                "sessionUpdate": "session_message",
                "messageId": "task:kid",
                "senderSessionId": "mom",
                "recipientSessionId": "kid",
                "recipientMessageId": "task",
                "content": content,
            },
        },
        {
            "sessionId": "kid",
            "update": {
                "sessionUpdate": "session_message",
                "messageId": "task",
                "senderSessionId": "mom",
                "recipientSessionId": "kid",
                "senderMessageId": "task:kid",
                "content": content,
            },
        },
    ]
    assert kid.see(message(TextContent(text="A steer."))) == []  # only the first message is the task
    kid.see(model_call(Usage(input_tokens=10, output_tokens=2)))
    kid.see(model_call(None))
    kid.see(model_call(Usage(input_tokens=5, output_tokens=1, cache_read_tokens=4, reasoning_tokens=3)))
    kid.see(turn_end(TurnCompleted()))
    [answer_out, chunk, answer_in, end] = wire(kid.end(result("It is done.")))
    assert answer_out["sessionId"] == "kid" and "content" not in answer_out["update"]
    assert answer_out["update"]["recipientMessageId"] == "answer:kid"
    assert chunk == {
        "sessionId": "kid",
        "update": {
            "sessionUpdate": "session_message_chunk",
            "messageId": "answer",
            "content": {"type": "text", "text": "It is done."},
        },
    }
    assert answer_in["sessionId"] == "mom" and answer_in["update"]["senderMessageId"] == "answer"
    assert answer_in["update"]["content"] == [{"type": "text", "text": "It is done."}]
    assert end == {
        "sessionId": "mom",
        "update": {
            "sessionUpdate": "subagent_update",
            "sessionId": "kid",
            "capabilities": None,
            "state": {
                "state": "idle",
                "stopReason": "end_turn",
                "usage": {
                    "totalTokens": 22,
                    "inputTokens": 15,
                    "outputTokens": 3,
                    "thoughtTokens": 3,
                    "cachedReadTokens": 4,
                },
            },
        },
    }
    assert kid.end(result("again")) == []  # the end goes out once


@pytest.mark.parametrize(
    ("reason", "parent_result", "stop", "error"),
    [
        (TurnFailed(message="boom", code="SERVER"), result("Error: subagent run failed", error=True), "error",
         {"code": -32603, "message": "Internal error: turn failed: boom", "data": {"code": "SERVER"}}),
        (TurnFailed(message="boom"), result("Error: subagent run failed", error=True), "error",
         {"code": -32603, "message": "Internal error: turn failed: boom"}),
        # A clean turn of a structured run that recorded nothing: the run failed.
        (TurnCompleted(), result("Error: subagent run failed", error=True), "error",
         {"code": -32603, "message": "Internal error: turn failed: the child ended its turn without calling"
          " `structured_output`", "data": {"code": "structured_output_missing"}}),
        (TurnAborted(reason="cancelled by the client"), result("Error: subagent run was cancelled", error=True),
         "cancelled", None),
        (TurnMaxSteps(), result("Error: subagent run ended abnormally (max-steps)", error=True),
         "max_turn_requests", None),
        (None, None, "cancelled", None),  # stopped before its turn began, and the call had no result
    ],
)  # fmt: skip
def test_a_run_that_did_not_answer_ends_idle_with_its_reason(
    reason: Any, parent_result: ToolResultData | None, stop: str, error: dict[str, Any] | None
) -> None:
    kid = child()
    if reason is not None:
        kid.see(turn_end(reason))
    [end] = wire(kid.end(parent_result))  # no answer message
    state = end["update"]["state"]
    assert (state["stopReason"], state.get("error")) == (stop, error)
    assert state["usage"] == {"totalTokens": 0, "inputTokens": 0, "outputTokens": 0}


def test_a_successful_run_without_text_sends_no_answer() -> None:
    kid = child()
    kid.see(turn_end(TurnCompleted()))
    [end] = kid.end(result(""))
    assert end[1].dump()["state"]["stopReason"] == "end_turn"


def test_waiting_for_the_user_and_back() -> None:
    assert [f["update"]["state"] for f in wire([child().waiting(True), child().waiting(False)])] == [
        {"state": "requires_action"},
        {"state": "running"},
    ]


# -- without child sessions: the answer on the delegating card ------------------------------------

ORIGIN = ChildOrigin(route="s1/call_kid", parent_tool_call_id="call_kid")


def delta(text: str, time: int, index: int = 0) -> SessionEvent:
    return AssistantChunkEvent(
        seq=0, time=time, data=AssistantChunkData(turn=1, step=1, chunk=TextDelta(index=index, text=text))
    )


def block_end(text: str, time: int, index: int = 0) -> SessionEvent:
    chunk = BlockEnd(index=index, block=TextBlock(text=text))
    return AssistantChunkEvent(seq=0, time=time, data=AssistantChunkData(turn=1, step=1, chunk=chunk))


def card_texts(updates: list[Any]) -> list[list[str] | None]:
    shown: list[list[str] | None] = []
    for update in updates:
        if update is None:
            shown.append(None)
            continue
        dumped = update.dump()
        assert dumped["toolCallId"] == "call_kid" and "status" not in dumped
        assert dumped["_meta"] == {"acpAgent": {"route": "s1/call_kid", "parentToolCallId": "call_kid"}}
        shown.append([item["content"]["text"] for item in dumped["content"]])
    return shown


def test_the_answer_grows_on_the_card_at_block_ends_only_without_a_period() -> None:
    m = UpdateMapper(lambda name: None, ORIGIN)
    events = [
        message(TextContent(text="Count.")),
        delta("Let me ", 1), delta("count.", 2), block_end("Let me count.", 3),
        AssistantChunkEvent(seq=0, time=4,
                            data=AssistantChunkData(turn=1, step=1, chunk=BlockStart(index=1, block_type="text"))),
        block_end("Whole.", 5, index=1),  # a block that came only whole
        model_call(None),
        delta("3", 7), block_end("3", 8),  # the next model call's text replaces it
        block_end("3", 9),  # nothing new: no update
    ]  # fmt: skip
    assert card_texts([m.map(e) for e in events]) == [
        None, None, None, ["Count.", "Let me count."], None, ["Count.", "Let me count.Whole."], None, None,
        ["Count.", "3"], None,
    ]  # fmt: skip


def test_the_answer_also_grows_while_a_block_streams_every_so_many_ms_of_the_childs_clock() -> None:
    m = UpdateMapper(lambda name: None, ORIGIN, answer_every_ms=200)
    events = [delta("a", 1000), delta("b", 1100), delta("c", 1250), delta("d", 1300), block_end("abcd", 1310)]
    assert card_texts([m.map(e) for e in events]) == [["a"], None, ["abc"], None, ["abcd"]]
