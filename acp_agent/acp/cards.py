"""A tool call's card: what the editor shows of it before its result.

One builder for the two places a card goes out: the `tool_call` update that opens a call and the
`toolCall` of the `session/request_permission` that asks about it, so the user sees the same title,
kind, input, content and locations in both. Its raw input follows the one rule for arguments
(`session.content.parse_arguments`: blank text is `{}`); arguments that are not JSON go out as
their text, and arguments too large or too deep for a call as a note saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from pydantic import ValidationError

from acp_agent.acp.schema import (
    PermissionToolCall,
    Text,
    ToolCallContent,
    ToolCallContentItem,
    ToolCallDiff,
    ToolCallLocation,
    ToolCallStart,
    ToolKind,
)
from acp_agent.session.content import ArgumentsRefused, parse_arguments
from acp_agent.tools.base import Diff, Location, Tool, ToolPresentation, ToolPreview


class ToolCard(NamedTuple):
    title: str
    kind: ToolKind
    raw_input: Any
    content: list[ToolCallContentItem] | None
    locations: list[ToolCallLocation] | None
    name: str | None = None
    """The tool's programmatic name (ACP `ToolCall.name`), when the tool gives one."""
    meta: dict[str, Any] | None = None
    """The tool's own `_meta` entries (an MCP tool's server and name), joined with the agent's by
    the caller (`UpdateMapper.meta`)."""

    def start(self, tool_call_id: str, meta: dict[str, Any] | None) -> ToolCallStart:
        """The `tool_call` update that opens the call (status `in_progress`)."""
        return ToolCallStart(
            tool_call_id=tool_call_id,
            title=self.title,
            name=self.name,
            kind=self.kind,
            status="in_progress",
            raw_input=self.raw_input,
            content=self.content,
            locations=self.locations,
            meta=meta,
        )

    def asked(
        self, tool_call_id: str, meta: dict[str, Any] | None, preview: ToolPreview | None = None
    ) -> PermissionToolCall:
        """The `toolCall` of a `session/request_permission` about the call: `pending` (it waits
        for the user), with the change it would make (`Tool.preview`: a write's diff, or the note
        in place of one, and the file) after the card's own content and locations, as its card
        shows them once it runs."""
        content = list(self.content or [])
        locations = list(self.locations or [])
        if preview is not None:
            content += [*wire_diffs(preview.diffs), *text_content(preview.notes)]
            locations += wire_locations(preview.locations) or []
        return PermissionToolCall(
            tool_call_id=tool_call_id,
            title=self.title,
            name=self.name,
            kind=self.kind,
            status="pending",
            raw_input=self.raw_input,
            content=content or None,
            locations=locations or None,
            meta=meta,
        )


def tool_card(tool: Tool[Any] | None, name: str, arguments: str) -> ToolCard:
    """The card of a call of `name` with `arguments` (raw JSON text): the tool's presentation of
    its validated arguments, or just its name when the tool is unknown or the arguments invalid."""
    raw_input = raw_input_of(arguments)
    shown = _present(tool, raw_input) or ToolPresentation(title=name)
    return ToolCard(
        title=shown.title,
        kind=shown.kind,
        raw_input=raw_input,
        content=text_content(shown.content) or None,
        locations=wire_locations(shown.locations),
        name=shown.name,
        meta=shown.meta,
    )


def raw_input_of(arguments: str) -> Any:
    try:
        return parse_arguments(arguments)
    except ArgumentsRefused as exc:  # bounded like the call: a note, never the text itself
        return f"[arguments not shown: {exc}]"
    except ValueError:
        return arguments


def text_content(paragraphs: Sequence[str]) -> list[ToolCallContentItem]:
    return [ToolCallContent(content=Text(text=text)) for text in paragraphs]


def wire_diffs(diffs: Sequence[Diff]) -> list[ToolCallDiff]:
    return [ToolCallDiff(path=diff.path, old_text=diff.old_text, new_text=diff.new_text) for diff in diffs]


def wire_locations(locations: Sequence[Location]) -> list[ToolCallLocation] | None:
    return [ToolCallLocation(path=loc.path, line=loc.line) for loc in locations] or None


def _present(tool: Tool[Any] | None, raw_input: Any) -> ToolPresentation | None:
    if tool is None:
        return None
    try:
        return tool.present(tool.Params.model_validate(raw_input))
    except ValidationError:
        return None
