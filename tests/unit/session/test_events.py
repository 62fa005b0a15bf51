from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from acp_agent.kernel._compact import compacted
from acp_agent.session import (
    AssistantChunkEvent,
    SessionHeader,
    StreamedChunk,
    TurnEndEvent,
    UnsupportedVersion,
    default_registry,
)
from acp_agent.session.content import (
    BlockEnd,
    Finish,
    FinishReason,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextDelta,
)
from tests.paths import UPSTREAM


def upstream_logs() -> list[Path]:
    if not UPSTREAM.is_dir():
        pytest.skip("the shared upstream scenarios are absent")
    logs = sorted(UPSTREAM.glob("*/session*.jsonl"))
    assert logs
    return logs


def test_every_upstream_line_round_trips() -> None:
    registry = default_registry()
    for path in upstream_logs():
        header, *events = path.read_text(encoding="utf-8").splitlines()
        assert SessionHeader.model_validate(json.loads(header)).dump() == json.loads(header), path
        for line in events:
            obj = json.loads(line)
            event = registry.parse(obj)
            assert event.dump() == obj, (path, line)
            # The persisted form is the same JSON, key for key.
            assert json.loads(event.model_dump_json(by_alias=True, exclude_none=True)) == obj


def test_header_dumps_only_what_is_set() -> None:
    header = SessionHeader(id="a", created_at=5)
    assert header.dump() == {"type": "session", "version": 0, "id": "a", "createdAt": 5}
    child = SessionHeader(id="b", created_at=6, parent_session="a", seed_length=38, route="s1/call_0")
    assert child.dump() == {
        "type": "session",
        "version": 0,
        "id": "b",
        "createdAt": 6,
        "parentSession": "a",
        "seedLength": 38,
        "route": "s1/call_0",
    }


def test_header_keeps_fields_from_newer_writers() -> None:
    obj = {"type": "session", "version": 0, "id": "a", "createdAt": 5, "title": "later field"}
    assert SessionHeader.model_validate(obj).dump() == obj


def test_header_refuses_other_versions() -> None:
    with pytest.raises(UnsupportedVersion, match="unsupported session log version 1") as caught:
        SessionHeader.model_validate({"type": "session", "version": 1, "id": "a", "createdAt": 5})
    assert caught.value.version == 1


def test_header_refuses_another_line_type() -> None:
    with pytest.raises(ValidationError):
        SessionHeader.model_validate({"type": "turn/start", "version": 0, "id": "a", "createdAt": 5})


@pytest.mark.parametrize(
    "reason",
    [
        {"kind": "completed"},
        {"kind": "aborted"},
        {"kind": "aborted", "reason": "cancelled by the client"},
        {"kind": "error", "message": "boom"},
        {"kind": "error", "step": 2, "message": "boom", "code": "SERVER"},
        {"kind": "disposed"},
        {"kind": "max-tokens"},
        {"kind": "max-steps"},
        {"kind": "interrupted"},
    ],
)
def test_every_turn_end_reason_round_trips(reason: dict[str, object]) -> None:
    obj = {"type": "turn/end", "seq": 3, "time": 9, "data": {"turn": 1, "reason": reason}}
    event = default_registry().parse(obj)
    assert isinstance(event, TurnEndEvent)
    assert event.dump() == obj


def test_turn_end_reason_kind_is_checked() -> None:
    with pytest.raises(ValidationError):
        default_registry().parse(
            {"type": "turn/end", "seq": 3, "time": 9, "data": {"turn": 1, "reason": {"kind": "bored"}}}
        )


def test_optional_fields_are_dumped_only_when_set() -> None:
    obj = {
        "type": "tool/result",
        "seq": 0,
        "time": 1,
        "ignorable": True,
        "data": {
            "turn": 1,
            "step": 1,
            "callId": "c",
            "content": [{"type": "text", "text": "Error: x"}],
            "isError": True,
            "error": {"code": "E", "message": "x"},
        },
    }
    assert default_registry().parse(obj).dump() == obj
    message = {
        "type": "assistant/message",
        "seq": 0,
        "time": 1,
        "data": {"turn": 1, "step": 1, "content": [{"type": "text", "text": "par"}], "interrupted": True},
    }
    assert default_registry().parse(message).dump() == message


@pytest.mark.parametrize(
    "chunk",
    [
        TextDelta(index=0, text="héllo "),
        ReasoningDelta(index=1, text="so"),
        BlockEnd(index=0, block=TextBlock(text="héllo ")),
        Finish(reason=FinishReason(kind="stop")),
    ],
)
def test_a_streamed_chunk_event_is_the_event_validation_makes(chunk: StreamChunk) -> None:
    validated = default_registry().build("assistant/chunk", 7, 1234, {"turn": 2, "step": 3, "chunk": chunk})
    streamed = AssistantChunkEvent.streamed(StreamedChunk(7, 1234, 2, 3, chunk))
    assert streamed.fields == validated.fields == (7, 1234, 2, 3, chunk)
    assert type(streamed) is type(validated) and type(streamed.data) is type(validated.data)
    assert streamed == validated and repr(streamed) == repr(validated)
    assert streamed.model_dump_json() == validated.model_dump_json() and streamed.dump() == validated.dump()
    compacted(validated)  # as the log keeps it
    for made in (streamed, streamed.data):  # what pydantic keeps beside the fields, as validation sets it
        twin = validated if made is streamed else validated.data
        assert made.model_fields_set is twin.model_fields_set  # one set shared (see `kernel._compact`)
        assert (
            made.__pydantic_extra__ == twin.__pydantic_extra__
            and made.__pydantic_private__ == twin.__pydantic_private__
        )
    assert streamed.model_copy(update={"seq": 8}).seq == 8 and streamed.model_fields_set == {
        "type",
        "seq",
        "time",
        "data",
    }
