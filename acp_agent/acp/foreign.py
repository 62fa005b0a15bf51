"""What an ACP agent run as a child process (`acp_agent.subagents.acp`) shows and asks on this
connection, through its stand-in child agent.

- `foreign_update`: one `session/update` the child sent (an `acp/update` event of the stand-in's
  log) as this server sends it: only its message and thought chunks (text), tool calls, their
  updates and plans, rebuilt from the fields this server models (a field it does not model is
  dropped, and so is a `terminal` content item: the child's terminals are this server's, never
  the editor's; an update that still does not fit is not shown). Its tool call ids and `_meta` are the
  stand-in's, as an in-process child's: its own for a child session, route-prefixed and nested
  under the delegating call on the top-level session, where its text is not shown (its answer is
  the call's result).
- `ForeignAsker`: the child's `session/request_permission`, asked of the user on the session its
  stand-in shows on (the child's state `requires_action` meanwhile), with the child's own options;
  the user's answer goes back to the child. Anything else (the stand-in not shown here, the client
  failing, an answer that is not an outcome) answers `cancelled`: nothing is approved for the user.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from acp_agent.acp.errors import ClientError
from acp_agent.acp.schema import (
    ContentChunk,
    PermissionOption,
    PermissionToolCall,
    Plan,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionUpdate,
    ToolCallProgress,
    ToolCallStart,
)
from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Disposer
from acp_agent.subagents.keys import PERMISSION_FORWARDER

if TYPE_CHECKING:
    from acp_agent.acp.wire import Wire
    from acp_agent.agent.agent import Agent

log = logging.getLogger(__name__)

CANCELLED: dict[str, Any] = {"outcome": {"outcome": "cancelled"}}
_TOOL_FIELDS = ("title", "kind", "status", "rawInput", "rawOutput", "content", "locations")


def foreign_update(
    raw: dict[str, Any], wire_id: Callable[[str], str], meta: dict[str, Any] | None, *, text: bool
) -> SessionUpdate | None:
    """`raw` as this connection shows it, or None (see the module's doc)."""
    kind = raw.get("sessionUpdate")
    try:
        match kind:
            case "agent_message_chunk" | "agent_thought_chunk" if text:
                return ContentChunk.model_validate({"sessionUpdate": kind, "content": raw.get("content")})
            case "plan" if text:
                return Plan.model_validate({"entries": raw.get("entries")})
            case "tool_call" | "tool_call_update":
                fields = {name: raw[name] for name in _TOOL_FIELDS if raw.get(name) is not None}
                if isinstance(fields.get("content"), list):
                    # A terminal the child shows is one this server ran for it, not one of the
                    # editor's: the editor could not find it (its output is in `rawOutput`). With
                    # nothing else, the card's content stays as it was.
                    content = [item for item in fields.pop("content") if _not_terminal(item)]
                    if content or not raw["content"]:
                        fields["content"] = content
                call_id = wire_id(str(raw.get("toolCallId")))
                if kind == "tool_call":
                    fields.pop("rawOutput", None)
                    fields.setdefault("kind", "other")
                    fields.setdefault("status", "pending")
                    return ToolCallStart.model_validate({**fields, "toolCallId": call_id, "_meta": meta})
                changes = {k: v for k, v in fields.items() if k not in ("title", "kind")}
                if not changes:
                    return None  # nothing this server shows changed (a terminal's content, say)
                return ToolCallProgress.model_validate({**changes, "toolCallId": call_id, "_meta": meta})
    except ValidationError as exc:
        log.debug("an ACP child's %s update is not shown: %s", kind, exc)
    return None


def _not_terminal(item: Any) -> bool:
    return not (isinstance(item, dict) and item.get("type") == "terminal")


class ForeignAsker:
    """`PERMISSION_FORWARDER` for one connection."""

    def __init__(self, wire: Wire) -> None:
        self._wire = wire

    async def ask(self, agent: Agent, request: dict[str, Any]) -> dict[str, Any]:
        shown = self._wire.wire_of(agent.id)
        if shown is None:
            return CANCELLED
        mapper = shown.mapper
        try:
            asked = dict(request.get("toolCall") or {})
            asked = {key: value for key, value in asked.items() if key in (*_TOOL_FIELDS, "toolCallId")}
            tool_call = PermissionToolCall.model_validate(
                {**asked, "toolCallId": mapper.wire_id(str(asked.get("toolCallId"))), "_meta": mapper.meta()}
            )
            options = [PermissionOption.model_validate(option) for option in request.get("options") or []]
        except (ValidationError, TypeError, ValueError):
            return CANCELLED
        params = RequestPermissionParams(session_id=shown.session_id, tool_call=tool_call, options=options)
        if shown.child is not None:
            self._wire.send([shown.child.waiting(True)])
        try:
            answer = RequestPermissionResult.model_validate(
                await self._wire.conn.request("session/request_permission", params.dump())
            )
        except (ClientError, ValidationError):
            return CANCELLED
        finally:
            if shown.child is not None:
                self._wire.send([shown.child.waiting(False)])
        outcome = answer.outcome
        if outcome.outcome == "cancelled" or outcome.option_id not in {option.option_id for option in options}:
            return CANCELLED
        return {"outcome": {"outcome": "selected", "optionId": outcome.option_id}}


def install(ctx: Context, wire: Wire) -> Disposer:
    """Forward ACP children's permission requests to `wire`'s client."""
    return ctx.provide(PERMISSION_FORWARDER, ForeignAsker(wire))
