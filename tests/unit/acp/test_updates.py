"""`UpdateMapper`: session-log events to `session/update` payloads, including the shapes no
scripted turn produces (arguments that are not JSON, a tool that shows locations), each held
against the official package's model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from acp import schema as official
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from acp_agent.acp.connection import encode
from acp_agent.acp.schema import SessionNotification
from acp_agent.acp.updates import ChildOrigin, UpdateFrames, UpdateMapper
from acp_agent.session.content import (
    BlockStart,
    Finish,
    FinishReason,
    ReasoningDelta,
    ResourceLink,
    StreamChunk,
    TextContent,
    TextDelta,
)
from acp_agent.session.events import (
    AssistantChunkData,
    AssistantChunkEvent,
    SessionEvent,
    StepData,
    StepStartEvent,
    ToolCallData,
    ToolCallEvent,
    ToolError,
    ToolResultData,
    ToolResultEvent,
)
from acp_agent.tools.base import Location, Tool, ToolCallContext, ToolPresentation, ToolResult
from acp_agent.tools.bash import BashTool


class ReadParams(BaseModel):
    path: str
    line: int = 1


class ReadTool(Tool[ReadParams]):
    """A tool that points the editor at a file."""

    name = "read"
    description = "Read a file."
    Params = ReadParams

    async def run(self, params: ReadParams, call: ToolCallContext) -> ToolResult:
        raise NotImplementedError  # never run: only presented

    def present(self, params: ReadParams) -> ToolPresentation:
        return ToolPresentation(
            title=f"Read {params.path}", kind="read", locations=[Location(path=params.path, line=params.line)]
        )


TOOLS: dict[str, Tool[Any]] = {"read": ReadTool(), "bash": BashTool()}


def mapper(origin: ChildOrigin | None = None) -> UpdateMapper:
    return UpdateMapper(TOOLS.get, origin)


def chunk(value: StreamChunk) -> SessionEvent:
    return AssistantChunkEvent(seq=0, time=0, data=AssistantChunkData(turn=1, step=1, chunk=value))


def call(call_id: str, name: str, arguments: str) -> SessionEvent:
    return ToolCallEvent(
        seq=0, time=0, data=ToolCallData(turn=1, step=1, call_id=call_id, name=name, arguments=arguments)
    )


def result(call_id: str, text: str, *, error: bool = False, link: bool = False) -> SessionEvent:
    content: list[Any] = [TextContent(text=text)]
    if link:
        content.append(ResourceLink(uri="file:///a", name="a"))
    return ToolResultEvent(
        seq=0,
        time=0,
        data=ToolResultData(
            turn=1,
            step=1,
            call_id=call_id,
            content=content,
            is_error=error,
            error=ToolError(code="failed", message=text) if error else None,
        ),
    )


def wire(update: Any) -> dict[str, Any]:
    """The update as it goes out, checked against the official model on the way."""
    assert update is not None
    params = SessionNotification(session_id="s", update=update).dump()
    assert params["update"] == update.dump()  # what `Wire.update` sends: the update's own dump
    parsed = official.SessionNotification.model_validate(params)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == params
    return dict(params["update"])


def test_text_and_reasoning_deltas_stream_other_chunks_do_not() -> None:
    m = mapper()
    assert wire(m.map(chunk(TextDelta(index=0, text="Hi")))) == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "Hi"},
    }
    assert wire(m.map(chunk(ReasoningDelta(index=0, text="Hm")))) == {
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "text", "text": "Hm"},
    }
    assert m.map(chunk(BlockStart(index=0, block_type="text"))) is None
    assert m.map(chunk(Finish(reason=FinishReason(kind="stop")))) is None
    assert m.map(StepStartEvent(seq=0, time=0, data=StepData(turn=1, step=1))) is None


ANY_TEXT = st.text(st.characters(exclude_categories=()))
"""Any string, lone surrogates included (a model's JSON can escape one)."""


def is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@given(text=ANY_TEXT, session_id=ANY_TEXT, thought=st.booleans())
def test_a_delta_frame_built_directly_is_the_frame_of_its_update(text: str, session_id: str, thought: bool) -> None:
    delta = ReasoningDelta(index=0, text=text) if thought else TextDelta(index=0, text=text)
    frames = UpdateFrames(session_id)
    shown = mapper().text(delta)
    update = mapper().map(chunk(delta))
    assert shown is not None and update is not None
    notification = SessionNotification(session_id=session_id, update=update).dump()
    direct, dumped = frames.text(shown), encode({"jsonrpc": "2.0", "method": "session/update", "params": notification})
    assert direct.endswith(b"\n") and direct.count(b"\n") == 1
    assert json.loads(direct) == json.loads(dumped)
    wire(update)  # what both say is an update the official model takes
    if is_unicode(text + session_id):
        assert direct == dumped  # the very bytes `Connection.notify` writes


def test_a_child_shows_no_text_on_the_wire() -> None:
    origin = ChildOrigin(route="s1/call_1", parent_tool_call_id="call_1")
    assert mapper(origin).text(TextDelta(index=0, text="Hi")) is None


def test_a_tool_that_shows_locations() -> None:
    m = mapper()
    assert wire(m.map(call("c1", "read", '{"path": "/w/a.py", "line": 3}'))) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "Read /w/a.py",
        "kind": "read",
        "status": "in_progress",
        "rawInput": {"path": "/w/a.py", "line": 3},
        "locations": [{"path": "/w/a.py", "line": 3}],
    }
    # No render_result of its own: the result's text blocks, one paragraph each.
    assert wire(m.map(result("c1", "print(1)", link=True)))["content"] == [
        {"type": "content", "content": {"type": "text", "text": "print(1)"}}
    ]


@pytest.mark.parametrize(
    ("arguments", "raw_input"),
    [("{not json", "{not json"), ("", {}), ("  ", {}), ('["a"]', ["a"]), ('{"path": 3}', {"path": 3})],
)
def test_arguments_that_are_not_what_the_tool_takes_show_as_they_are(arguments: str, raw_input: Any) -> None:
    update = wire(mapper().map(call("c1", "read", arguments)))
    assert update["rawInput"] == raw_input
    assert (update["title"], update["kind"]) == ("read", "other")  # the tool could not present them


def test_an_unknown_tool_and_a_failed_result_show_the_plain_text() -> None:
    m = mapper()
    assert wire(m.map(call("c1", "nope", "{}")))["title"] == "nope"
    assert wire(m.map(result("c1", "Error: unknown tool 'nope'", error=True))) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "failed",
        "content": [{"type": "content", "content": {"type": "text", "text": "Error: unknown tool 'nope'"}}],
    }
    # A failed call of a known tool is not rendered as its output.
    m.map(call("c2", "bash", '{"command": "false"}'))
    assert wire(m.map(result("c2", "[exit code 1]", error=True)))["content"][0]["content"]["text"] == "[exit code 1]"


def test_a_result_of_a_call_never_seen_still_maps() -> None:
    assert wire(mapper().map(result("ghost", "late")))["status"] == "completed"


def test_a_child_shows_only_its_tool_calls_with_prefixed_ids_and_meta() -> None:
    origin = ChildOrigin(route="s1/call_spawn", parent_tool_call_id="call_spawn")
    m = mapper(origin)
    assert m.map(chunk(TextDelta(index=0, text="child text"))) is None  # a chunk of the parent's card's answer
    meta = {
        "acpAgent": {"route": "s1/call_spawn", "parentToolCallId": "call_spawn"},
        "claudeCode": {"parentToolUseId": "call_spawn"},
    }
    started = wire(m.map(call("c1", "bash", '{"command": "echo hi", "description": "Say hi"}')))
    assert started["toolCallId"] == "s1/call_spawn/c1"
    assert started["_meta"] == meta
    assert started["content"] == [{"type": "content", "content": {"type": "text", "text": "Say hi"}}]
    done = wire(m.map(result("c1", "hi\n")))
    assert (done["toolCallId"], done["_meta"]) == ("s1/call_spawn/c1", meta)
    assert done["content"] == [{"type": "content", "content": {"type": "text", "text": "```console\nhi\n```"}}]
    assert m.wire_id("x") == "s1/call_spawn/x"
    assert mapper().wire_id("x") == "x"
