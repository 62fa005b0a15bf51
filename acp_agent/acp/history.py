"""A stored conversation as the `session/update`s that showed it live: what `session/load` replays.

The session's own events go through the same `UpdateMapper` as live ones, so every recorded
thought and message delta is one chunk again and every tool call is its `tool_call` then its
`tool_call_update` with the final status. Added for the replay only: a `user_message_chunk` per
content block of each message the user sent (a prompt, a steer, a slash command the agent
answered itself), which the client showed itself live. Each child agent's activity (its tool calls, `_meta` naming its route and the parent's call)
comes from its own log, right before the update that completes the parent's call that started
it, recursively; that is where the live frames of a child sit once concurrent siblings are put
in canonical order. The title (`session_info_update`), each model call's `usage_update` and each
compaction (its updates or its card, then the new size) come back where they were sent live; a
terminal a call ran in does not (its text result shows).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from acp_agent.acp.schema import (
    BlobResourceContents,
    ContentChunk,
    EmbeddedResource,
    Image,
    ResourceLink,
    SessionUpdate,
    Text,
    TextResourceContents,
)
from acp_agent.acp.updates import ChildOrigin, ToolLookup, UpdateMapper
from acp_agent.session.content import ContentBlock, ImageContent, TextContent
from acp_agent.session.content import EmbeddedResource as StoredResource
from acp_agent.session.content import TextResourceContents as StoredText
from acp_agent.session.events import (
    COMMAND_SOURCE,
    USER_SOURCES,
    SessionEvent,
    SessionHeader,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from acp_agent.session.routes import CallKeys

_SHOWN_SOURCES = (*USER_SOURCES, COMMAND_SOURCE)
"""What the user typed: their prompts and steers, and the slash commands the agent answered itself."""

_LINK_EXTRAS: dict[str, type] = {"title": str, "description": str, "mimeType": str, "size": int}


@dataclass(frozen=True)
class StoredLog:
    """A stored agent's header and events, and the stored logs of the children it started."""

    header: SessionHeader
    events: Sequence[SessionEvent]
    children: list[StoredLog] = field(default_factory=list)


def history_updates(
    log: StoredLog,
    lookup: ToolLookup,
    child_lookup: ToolLookup,
    *,
    context_window: int | None = None,
    compaction: bool = False,
) -> list[SessionUpdate]:
    """The updates of a top-level session's log and its children's, in the order described above.
    `lookup` finds the session's tools, `child_lookup` the children's (for their presentation);
    with `context_window`, each recorded model call's usage is a `usage_update` again; each
    compaction shows as it did live (`compaction`: as `compaction_update`s, else as its card).
    Terminals a call ran in are left out (released long ago): its result's text shows instead."""
    mapper = UpdateMapper(lookup, context_window=context_window, live=False, compaction=compaction)
    return list(_replay(log, mapper, child_lookup, top_level=True))


def _replay(
    log: StoredLog, mapper: UpdateMapper, child_lookup: ToolLookup, *, top_level: bool
) -> Iterator[SessionUpdate]:
    waiting = _children_by_call(log)
    keys = CallKeys()
    open_calls: dict[str, str] = {}
    """Each call id's latest occurrence, as a route key."""
    own_from = log.header.seed_length or 0  # a fork child's seed is its parent's, never shown as its own
    for index, event in enumerate(log.events):
        if isinstance(event, ToolCallEvent):
            open_calls[event.data.call_id] = keys.add(event.data.call_id)
        if index < own_from:
            continue
        match event:
            case UserMessageEvent() if top_level and event.data.source.kind in _SHOWN_SOURCES:
                yield from (ContentChunk(session_update="user_message_chunk", content=_wire(b)) for b in event.data.content)
            case ToolResultEvent():
                call_id = event.data.call_id
                for child in waiting.pop(open_calls.get(call_id, call_id), []):
                    yield from _child(child, mapper, child_lookup)
        yield from mapper.updates(event)
    for children in waiting.values():  # started by no call of this log
        for child in children:
            yield from _child(child, mapper, child_lookup)


def _child(child: StoredLog, parent: UpdateMapper, lookup: ToolLookup) -> Iterator[SessionUpdate]:
    header = child.header
    started_by = parent.wire_id(header.spawn_call_id or "")
    origin = ChildOrigin(route=header.route or header.id, parent_tool_call_id=started_by)
    yield from _replay(child, UpdateMapper(lookup, origin, live=False), lookup, top_level=False)


def _children_by_call(log: StoredLog) -> dict[str, list[StoredLog]]:
    """The children by the route key of the call that started them: their route after the
    parent's (`<call id>`, `<call id>#<n>`, `#<n>`), else their `spawnCallId`; "" for neither."""
    prefix = f"{log.header.route}/" if log.header.route else None
    by_call: dict[str, list[StoredLog]] = {}
    for child in sorted(log.children, key=lambda c: (c.header.created_at, c.header.route or "", c.header.id)):
        route = child.header.route
        if prefix is not None and route is not None and route.startswith(prefix):
            key = route[len(prefix) :]
        else:
            key = child.header.spawn_call_id or ""
        by_call.setdefault(key, []).append(child)
    return by_call


def _wire(block: ContentBlock) -> Text | ResourceLink | EmbeddedResource | Image:
    """A stored user content block as ACP content (a link keeps the optional fields ACP knows)."""
    if isinstance(block, TextContent):
        return Text(text=block.text)
    if isinstance(block, ImageContent):
        return Image(data=block.data, mime_type=block.mime_type, uri=block.uri)
    if isinstance(block, StoredResource):
        stored = block.resource
        resource: TextResourceContents | BlobResourceContents
        if isinstance(stored, StoredText):
            resource = TextResourceContents(uri=stored.uri, text=stored.text, mime_type=stored.mime_type)
        else:
            resource = BlobResourceContents(uri=stored.uri, blob=stored.blob, mime_type=stored.mime_type)
        return EmbeddedResource(resource=resource)
    dumped = block.dump()
    extras = {
        key: value
        for key, value in dumped.items()
        if isinstance(value, _LINK_EXTRAS.get(key, ())) and not isinstance(value, bool)
    }
    return ResourceLink.model_validate({"uri": block.uri, "name": block.name, **extras})
