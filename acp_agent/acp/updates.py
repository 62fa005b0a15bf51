"""From session-log events to `session/update` payloads: what the editor sees of a turn."""

from __future__ import annotations

import json
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from acp_agent.acp.schema import (
    ContentChunk,
    Plan,
    PlanEntry,
    SessionUpdate,
    Text,
    ToolCallContent,
    ToolCallContentItem,
    ToolCallDiff,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
)
from acp_agent.session.events import SessionEvent
from acp_agent.tools.base import DISPLAY_EVENT, Diff, Location, Tool, ToolPresentation, ToolResult
from acp_agent.tools.todo import TODO_EVENT

ToolLookup = Callable[[str], "Tool[Any] | None"]


def _content(paragraphs: list[str]) -> list[ToolCallContentItem]:
    return [ToolCallContent(content=Text(text=text)) for text in paragraphs]


def _diffs(diffs: list[Diff]) -> list[ToolCallDiff]:
    return [ToolCallDiff(path=diff.path, old_text=diff.old_text, new_text=diff.new_text) for diff in diffs]


def _locations(locations: list[Location]) -> list[ToolCallLocation] | None:
    return [ToolCallLocation(path=loc.path, line=loc.line) for loc in locations] or None


@dataclass(frozen=True)
class ChildOrigin:
    """Where a child agent's activity shows on its top-level session: its tool calls, with ids
    prefixed by its route (unique in the session) and `_meta` naming the parent's tool call."""

    route: str
    parent_tool_call_id: str

    def wire_id(self, call_id: str) -> str:
        return f"{self.route}/{call_id}"

    def meta(self) -> dict[str, Any]:
        return {META_KEY: {"route": self.route, "parentToolCallId": self.parent_tool_call_id}}


META_KEY = "acpAgent"


class UpdateMapper:
    """Maps one agent's events; remembers each call's tool so its result renders the same way.

    A child's (`origin` given) text and plan stay in its own log: only its tool calls reach the
    wire. The diffs a running call shows (`tool/display`) stay in its content after its result.
    """

    def __init__(self, lookup: ToolLookup, origin: ChildOrigin | None = None) -> None:
        self._lookup = lookup
        self._origin = origin
        self._tools: dict[str, Tool[Any] | None] = {}
        self._diffs: dict[str, list[ToolCallContentItem]] = {}

    def wire_id(self, call_id: str) -> str:
        return self._origin.wire_id(call_id) if self._origin is not None else call_id

    def map(self, event: SessionEvent) -> SessionUpdate | None:
        data: Any = event.data
        meta = self._origin.meta() if self._origin is not None else None
        if event.type == "assistant/chunk" and self._origin is None:
            chunk = data.chunk
            if chunk.type == "text-delta":
                return ContentChunk(session_update="agent_message_chunk", content=Text(text=chunk.text))
            if chunk.type == "reasoning-delta":
                return ContentChunk(session_update="agent_thought_chunk", content=Text(text=chunk.text))
            return None
        if event.type == "tool/call":
            tool = self._tools[data.call_id] = self._lookup(data.name)
            raw_input = _raw_input(data.arguments)
            shown = _present(tool, raw_input) or ToolPresentation(title=data.name)
            return ToolCallStart(
                tool_call_id=self.wire_id(data.call_id),
                title=shown.title,
                kind=shown.kind,
                status="in_progress",
                raw_input=raw_input,
                content=_content(shown.content) or None,
                locations=_locations(shown.locations),
                meta=meta,
            )
        if event.type == DISPLAY_EVENT:
            # ACP replaces a call's content and locations with each update: send all diffs so far.
            diffs = self._diffs.setdefault(data.call_id, [])
            diffs += _diffs(data.diffs or [])
            return ToolCallProgress(
                tool_call_id=self.wire_id(data.call_id),
                content=list(diffs) if data.diffs else None,
                locations=_locations(data.locations or []),
                meta=meta,
            )
        if event.type == "tool/result":
            tool = self._tools.pop(data.call_id, None)
            result = ToolResult(content=data.content, is_error=data.is_error, error=data.error)
            paragraphs = tool.render_result(result) if tool is not None and not result.is_error else [
                result.plain_text()
            ]
            return ToolCallProgress(
                tool_call_id=self.wire_id(data.call_id),
                status="failed" if data.is_error else "completed",
                content=_content(paragraphs) + self._diffs.pop(data.call_id, []),
                meta=meta,
            )
        if event.type == TODO_EVENT and self._origin is None:
            entries = [PlanEntry(content=t.content, priority=t.priority, status=t.status) for t in data.todos]
            return Plan(entries=entries)
        return None


def _raw_input(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments


def _present(tool: Tool[Any] | None, raw_input: Any) -> ToolPresentation | None:
    if tool is None:
        return None
    try:
        return tool.present(tool.Params.model_validate(raw_input))
    except ValidationError:
        return None
