"""From session-log events to `session/update` payloads: what the editor sees of a turn."""

from __future__ import annotations

import json
from dataclasses import dataclass
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from acp_agent.acp.schema import (
    ContentChunk,
    Plan,
    PlanEntry,
    SessionInfoUpdate,
    SessionUpdate,
    Text,
    ToolCallContent,
    ToolCallContentItem,
    ToolCallDiff,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallTerminal,
    UsageUpdate,
)
from acp_agent.acp.titles import session_title
from acp_agent.commands.events import REPLY_EVENT
from acp_agent.session.events import USER_SOURCES, SessionEvent
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

    A child's (`origin` given) text, plan, usage and title stay in its own log: only its tool
    calls reach the wire. The diffs and the terminal a running call shows (`tool/display`) stay in
    its content after its result; a call shown in a terminal drops the rendering of a result that
    is its command's output (the terminal shows it), keeping only an error's (a timeout, a failure).

    `context_window` (tokens): with it, each model call's usage becomes a `usage_update`. `live`:
    false for a replay (`session/load`), where terminals are left out (the client released them,
    perhaps in another process) and the result's text shows instead. `shown`: the events the
    client has already seen (a loaded session's), so the title is not sent again.
    """

    def __init__(
        self,
        lookup: ToolLookup,
        origin: ChildOrigin | None = None,
        *,
        context_window: int | None = None,
        live: bool = True,
        shown: Sequence[SessionEvent] = (),
    ) -> None:
        self._lookup = lookup
        self._origin = origin
        self._context_window = context_window
        self._live = live
        self._titled = any(_from_user(event) for event in shown)
        self._tools: dict[str, Tool[Any] | None] = {}
        self._shown: dict[str, list[ToolCallContentItem]] = {}
        """Per call: the diffs (and, live, the terminals) it showed so far."""

    def wire_id(self, call_id: str) -> str:
        return self._origin.wire_id(call_id) if self._origin is not None else call_id

    def meta(self) -> dict[str, Any] | None:
        """The `_meta` of this agent's frames: a child's names its route and the parent's call."""
        return self._origin.meta() if self._origin is not None else None

    def map(self, event: SessionEvent) -> SessionUpdate | None:
        data: Any = event.data
        if event.type == "assistant/chunk":  # the hot path: one event per streamed chunk
            if self._origin is not None:
                return None
            chunk = data.chunk
            if chunk.type == "text-delta":
                return ContentChunk(session_update="agent_message_chunk", content=Text(text=chunk.text))
            if chunk.type == "reasoning-delta":
                return ContentChunk(session_update="agent_thought_chunk", content=Text(text=chunk.text))
            return None
        meta = self.meta()
        if self._origin is None and event.type == "assistant/message":
            usage = data.usage
            if usage is None or self._context_window is None:
                return None
            used = usage.input_tokens + (usage.cache_read_tokens or 0) + usage.output_tokens
            return UsageUpdate(used=used, size=self._context_window)
        if self._origin is None and _from_user(event) and not self._titled:
            self._titled = True  # the first prompt names the session, even when it has no title
            title = session_title(data.content)
            return SessionInfoUpdate(title=title) if title is not None else None
        if event.type == "tool/call":
            tool = self._tools[data.call_id] = self._lookup(data.name)
            raw_input = _raw_input(data.arguments)
            card = _present(tool, raw_input) or ToolPresentation(title=data.name)
            return ToolCallStart(
                tool_call_id=self.wire_id(data.call_id),
                title=card.title,
                kind=card.kind,
                status="in_progress",
                raw_input=raw_input,
                content=_content(card.content) or None,
                locations=_locations(card.locations),
                meta=meta,
            )
        if event.type == DISPLAY_EVENT:
            # ACP replaces a call's content and locations with each update: send all shown so far.
            shown = self._shown.setdefault(data.call_id, [])
            added: list[ToolCallContentItem] = [*_diffs(data.diffs or []), *_content(data.notes or [])]
            if data.terminal_id is not None and self._live:
                added.append(ToolCallTerminal(terminal_id=data.terminal_id))
            shown += added
            locations = _locations(data.locations or [])
            if not added and locations is None:
                return None  # a replayed terminal, left out
            return ToolCallProgress(
                tool_call_id=self.wire_id(data.call_id),
                content=list(shown) if added else None,
                locations=locations,
                meta=meta,
            )
        if event.type == "tool/result":
            tool = self._tools.pop(data.call_id, None)
            shown = self._shown.pop(data.call_id, [])
            result = ToolResult(content=data.content, is_error=data.is_error, error=data.error)
            paragraphs = tool.render_result(result) if tool is not None and not result.is_error else [
                result.plain_text()
            ]
            if result.error is None and any(isinstance(item, ToolCallTerminal) for item in shown):
                paragraphs = []  # the output is in the terminal
            return ToolCallProgress(
                tool_call_id=self.wire_id(data.call_id),
                status="failed" if data.is_error else "completed",
                content=_content(paragraphs) + shown,
                meta=meta,
            )
        if event.type == REPLY_EVENT and self._origin is None:  # a command's answer, without the model
            return ContentChunk(session_update="agent_message_chunk", content=Text(text=data.text))
        if event.type == TODO_EVENT and self._origin is None:
            entries = [PlanEntry(content=t.content, priority=t.priority, status=t.status) for t in data.todos]
            return Plan(entries=entries)
        return None


def _from_user(event: SessionEvent) -> bool:
    """Whether an event is a message the user wrote (a prompt or a steer)."""
    data: Any = event.data
    return event.type == "user/message" and data.source.kind in USER_SOURCES


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
