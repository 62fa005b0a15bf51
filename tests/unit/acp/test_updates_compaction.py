"""`UpdateMapper` for a compaction: `compaction_update`s and summary chunks for a client that shows
compactions, a "Compact conversation" card for one that does not, then the new context size and,
from the second compaction on, a one-line warning. The official package has no models for these
frames: each is held against the protocol's JSON Schema, which must be present."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

from acp_agent.acp.schema import SessionNotification
from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.compaction import texts
from acp_agent.session import SessionEvent, default_registry
from tests.paths import ACP_SCHEMA

REGISTRY = default_registry()


def checked(updates: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The updates as they go out, each valid against the schema (they have no official model)."""
    defs = json.loads(ACP_SCHEMA.read_text(encoding="utf-8"))["$defs"]
    validator = Draft202012Validator({"$ref": "#/$defs/SessionNotification", "$defs": defs})
    out = []
    for update in updates:
        params = SessionNotification(session_id="s", update=update).dump()
        assert [error.message for error in validator.iter_errors(params)] == []
        out.append(params["update"])
    return out


def event(type: str, **data: Any) -> SessionEvent:
    return REGISTRY.parse({"type": type, "seq": 0, "time": 0, "data": data})


def summary_step(step: int, text: str | None = "The sum", *, usage: bool = True) -> list[SessionEvent]:
    events = [event("step/start", turn=2, step=step, purpose="compaction")]
    if text is not None:
        events += [
            event("assistant/chunk", turn=2, step=step, chunk={"type": "block-start", "index": 0, "blockType": "text"}),
            event("assistant/chunk", turn=2, step=step, chunk={"type": "text-delta", "index": 0, "text": text}),
            event("assistant/chunk", turn=2, step=step, chunk={"type": "reasoning-delta", "index": 1, "text": "hm"}),
        ]
        extra = {"usage": {"inputTokens": 900, "outputTokens": 5}} if usage else {}
        events.append(event("assistant/message", turn=2, step=step, content=[{"type": "text", "text": text}], **extra))
    return [*events, event("step/end", turn=2, step=step)]


def compacted(summary: str = "The sum") -> SessionEvent:
    return event("compaction", turn=2, summary=summary, cutSeq=0, tokens=42, trigger="threshold")


def ended(kind: str, **reason: Any) -> SessionEvent:
    return event("turn/end", turn=2, reason={"kind": kind, **reason})


def shown(mapper: UpdateMapper, events: list[SessionEvent]) -> list[dict[str, Any]]:
    return checked(tuple(update for e in events for update in mapper.updates(e)))


def test_a_client_that_shows_compactions_sees_them_stream_and_complete() -> None:
    mapper = UpdateMapper(lambda name: None, context_window=1000, compaction=True)
    updates = shown(mapper, [*summary_step(1, text=None), *summary_step(2), compacted()])
    assert updates == [
        {"sessionUpdate": "compaction_update", "compactionId": "compaction-2-1", "status": "in_progress"},
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": "compaction-2-1",
            "content": {"type": "text", "text": "The sum"},
        },
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "compaction-2-1",
            "status": "completed",
            "summary": [{"type": "text", "text": "The sum"}],
        },
        {"sessionUpdate": "usage_update", "used": 42, "size": 1000},
    ]
    again = shown(mapper, [*summary_step(3), compacted("Again")])
    assert again[-1] == {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": texts.repeated(2)}}


def test_without_the_capability_a_compaction_is_a_think_card() -> None:
    mapper = UpdateMapper(lambda name: None)
    updates = shown(mapper, [*summary_step(1), compacted()])
    assert updates == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "compaction-2-1",
            "title": texts.CARD_TITLE,
            "kind": "think",
            "status": "in_progress",
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "compaction-2-1",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "The sum"}}],
        },
    ]


def test_a_compaction_that_fails_or_is_cancelled_says_so() -> None:
    for capable in (True, False):
        mapper = UpdateMapper(lambda name: None, compaction=capable)
        failed = shown(mapper, [*summary_step(1), ended("error", message="boom")])[-1]
        cancelled = shown(mapper, [*summary_step(1, usage=False), ended("aborted")])[-1]
        after = shown(mapper, [ended("completed")])
        if capable:
            assert failed == {
                "sessionUpdate": "compaction_update",
                "compactionId": "compaction-2-1",
                "status": "failed",
                "error": "boom",
            }
            assert cancelled == {
                "sessionUpdate": "compaction_update",
                "compactionId": "compaction-2-1",
                "status": "cancelled",
            }
        else:
            assert (failed["status"], failed["content"][0]["content"]["text"]) == ("failed", "boom")
            assert (cancelled["status"], cancelled["content"][0]["content"]["text"]) == ("failed", texts.CANCELLED)
        assert after == []


def test_a_childs_compaction_stays_in_its_own_log() -> None:
    mapper = UpdateMapper(lambda name: None, ChildOrigin(route="s1/c", parent_tool_call_id="c"), compaction=True)
    assert shown(mapper, [*summary_step(1), compacted(), ended("completed")]) == []


def test_a_loaded_sessions_mapper_counts_the_compactions_it_showed() -> None:
    mapper = UpdateMapper(lambda name: None, shown=[compacted()])
    assert shown(mapper, [*summary_step(1), compacted()])[-1]["content"]["text"] == texts.repeated(2)
