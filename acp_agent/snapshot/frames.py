"""What a JSON-RPC frame on the agent's stdout is: a response, an agent request, a notification.

Shared by the runner (which answers agent requests), the normalizer and the comparison.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from acp_agent.acp.updates import META_KEY

Frame = Any
"""A parsed stdout line: usually a dict; a batch response is a list."""


def encode(value: Any) -> str:
    """One line of compact JSON, keys in the order they came (as the server writes frames)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def is_response(frame: Frame) -> bool:
    """An answer to a client request (a batch answer is a list of them)."""
    if isinstance(frame, list):
        return bool(frame) and all(is_response(item) for item in frame)
    return isinstance(frame, dict) and "method" not in frame and ("result" in frame or "error" in frame)


def is_agent_request(frame: Frame) -> bool:
    """A request the agent sends the client (permission, fs, terminal): it has a method and an id."""
    return isinstance(frame, dict) and "method" in frame and "id" in frame


def session_update(frame: Frame) -> dict[str, Any] | None:
    """The `update` of a `session/update` notification, else None."""
    if isinstance(frame, dict) and frame.get("method") == "session/update" and "id" not in frame:
        update = (frame.get("params") or {}).get("update")
        return update if isinstance(update, dict) else None
    return None


def _attribution(frame: Frame, key: str) -> str | None:
    """A string of the `_meta.acpAgent` of a `session/update`, or of the tool call a
    `session/request_permission` asks about (set for a child agent's calls)."""
    update = session_update(frame)
    if update is None and is_agent_request(frame) and frame["method"] == "session/request_permission":
        update = (frame.get("params") or {}).get("toolCall")
    meta = update.get("_meta") if isinstance(update, dict) else None
    attribution = meta.get(META_KEY) if isinstance(meta, dict) else None
    value = attribution.get(key) if isinstance(attribution, dict) else None
    return value if isinstance(value, str) else None


def child_route(frame: Frame) -> str | None:
    """The route of the child agent a `session/update` (or a permission request) comes from (its
    `_meta` names it)."""
    return _attribution(frame, "route")


def parent_tool_call(frame: Frame) -> str | None:
    """The wire id of the tool call that started the child agent a `session/update` comes from."""
    return _attribution(frame, "parentToolCallId")


FINAL_STATUSES = ("completed", "failed")


def canonical_order(frames: Sequence[Frame]) -> list[Frame]:
    """Frames with every child agent's activity in one place: all of a child's frames (in its own
    order), just before the update that completes the tool call that started it; recursively, so
    a grandchild's frames come just before its parent child's update of that call.

    The session's own frames keep their order. Only the children's frames move, so concurrent
    children (whose frames interleave by scheduling) read one after the other, each under its
    delegating call, in that call's model order. A child whose delegating call never completes on
    the wire keeps its frames together at the end, after the session's, by route.
    """
    own: list[Frame] = []
    children: dict[str, list[Frame]] = {}
    """A child's frames, by its route."""
    started_by: dict[str, list[str]] = {}
    """The routes of the children each wire call id started, in order of first appearance (an
    endpoint may reuse a call id in a later step: each completion takes the next child)."""
    for frame in frames:
        route = child_route(frame)
        if route is None:
            own.append(frame)
            continue
        if route not in children:
            children[route] = []
            started_by.setdefault(parent_tool_call(frame) or "", []).append(route)
        children[route].append(frame)
    out: list[Frame] = []

    def emit(sequence: list[Frame]) -> None:
        for frame in sequence:
            update = session_update(frame)
            if update is not None and _completes_call(frame):
                routes = started_by.get(update["toolCallId"], [])
                if routes:
                    emit(children.pop(routes.pop(0), []))
            out.append(frame)

    emit(own)
    for route in sorted(children):  # what no completion took, in an order scheduling cannot change
        if route in children:  # (a stray grandchild goes with its stray parent)
            emit(children.pop(route))
    return out


def _completes_call(frame: Frame) -> bool:
    """A `tool_call_update` that ends its call (`completed` or `failed`)."""
    update = session_update(frame)
    return (
        update is not None
        and update.get("sessionUpdate") == "tool_call_update"
        and update.get("status") in FINAL_STATUSES
        and isinstance(update.get("toolCallId"), str)
    )
