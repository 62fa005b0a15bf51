"""What a JSON-RPC frame on the agent's stdout is: a response, an agent request, a notification.

Shared by the runner (which answers agent requests), the normalizer and the comparison.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from acp_agent.acp.updates import META_KEY
from acp_agent.session.routes import call_id_of

Frame = Any
"""A parsed stdout line: usually a dict; a batch response is a list."""

CANCEL_REQUEST = "$/cancel_request"
"""The notification either side sends to withdraw a request of its own, by id."""


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

Routes = Mapping[str, str]
NO_ROUTES: Routes = MappingProxyType({})
"""No child sessions: every frame is a top-level session's own."""
"""Each session id's route, from the logs' headers (`s1`, `s1/call_a`, ...)."""


def session_routes(logs: Mapping[str, Sequence[Any]]) -> dict[str, str]:
    """Each logged session's id and route (a run's logs are keyed by route, header first)."""
    return {log[0]["id"]: route for route, log in logs.items() if log and isinstance(log[0], dict) and "id" in log[0]}


def frame_route(frame: Frame, routes: Routes = NO_ROUTES) -> str | None:
    """The child agent a frame belongs to, or None for a top-level session's own: the deepest of
    the route its `_meta` names and those of the sessions it names (on the wire, as the sender or
    recipient of a message, as the child an update announces, as the child a card's update links
    to while the card runs), so that a child session's frames, and what its parent's session says
    of it, are the child's."""
    candidates = [child_route(frame)]
    if isinstance(frame, dict):
        params = frame.get("params")
        params = params if isinstance(params, dict) else {}
        update = session_update(frame) or {}
        linked = None if _completes_call(frame) else _attribution(frame, "childSessionId")
        for session_id in (
            params.get("sessionId"),
            update.get("senderSessionId"),
            update.get("recipientSessionId"),
            update.get("sessionId"),
            linked,
        ):
            candidates.append(routes.get(session_id) if isinstance(session_id, str) else None)
    children = [route for route in candidates if route is not None and "/" in route]
    return max(children, key=lambda route: route.count("/"), default=None)


def canonical_order(frames: Sequence[Frame], routes: Routes = NO_ROUTES) -> list[Frame]:
    """Frames with every child agent's activity in one place: all of a child's frames (in its own
    order), just before the update that completes the tool call that started it; recursively, so
    a grandchild's frames come just before its parent child's update of that call.

    The session's own frames keep their order. Only the children's frames move, so concurrent
    children (whose frames interleave by scheduling) read one after the other, each under its
    delegating call, in that call's model order. A child whose delegating call never completes on
    the wire, or that runs in the background (its call's `run_in_background`: it works on after
    the call answered, alongside its parent's later turns), keeps its frames together at the end,
    after the session's, by route.

    A child's frames are found by `frame_route`; its delegating call is the `parentToolCallId` its
    `_meta` names on the frame's session (a child shown on its top-level session), else the call
    its route ends with, on its parent's session (a child session: `routes` names them).
    """
    sessions = {route: session_id for session_id, route in routes.items()}
    own: list[Frame] = []
    children: dict[str, list[Frame]] = {}
    """A child's frames, by its route."""
    started_by: dict[tuple[str | None, str], list[str]] = {}
    """The routes of the children each call (session id, wire call id) started, in order of first
    appearance (an endpoint may reuse a call id in a later step: each completion takes the next)."""
    background: set[tuple[str | None, str]] = set()
    """The calls that started a child in the background (their completion does not take it)."""
    for frame in frames:
        route = frame_route(frame, routes)
        if route is None:
            own.append(frame)
            if (started := _started_in_background(frame)) is not None:
                background.add(started)
            continue
        if route not in children:
            children[route] = []
            started_by.setdefault(_started_by(frame, route, sessions), []).append(route)
        children[route].append(frame)
    out: list[Frame] = []

    def emit(sequence: list[Frame]) -> None:
        for frame in sequence:
            update = session_update(frame)
            if update is not None and _completes_call(frame):
                call = (frame["params"].get("sessionId"), update["toolCallId"])
                found = started_by.get(call, [])
                if found and call not in background:
                    emit(children.pop(found.pop(0), []))
            out.append(frame)

    emit(own)
    for route in sorted(children):  # what no completion took, in an order scheduling cannot change
        if route in children:  # (a stray grandchild goes with its stray parent)
            emit(children.pop(route))
    return out


def _started_by(frame: Frame, route: str, sessions: Mapping[str, str]) -> tuple[str | None, str]:
    """The call that started the child of `route` whose first frame is `frame`."""
    session_id = (frame.get("params") or {}).get("sessionId") if isinstance(frame, dict) else None
    parent_call = parent_tool_call(frame)
    if parent_call is not None:
        return session_id, parent_call
    parent, key = route.rsplit("/", 1)
    return sessions.get(parent), call_id_of(key)


def _started_in_background(frame: Frame) -> tuple[str | None, str] | None:
    """The call (session id, wire call id) of a `tool_call` whose input asks for a background child."""
    update = session_update(frame)
    if update is None or update.get("sessionUpdate") != "tool_call":
        return None
    raw, call_id = update.get("rawInput"), update.get("toolCallId")
    if isinstance(raw, dict) and raw.get("run_in_background") is True and isinstance(call_id, str):
        return frame["params"].get("sessionId"), call_id
    return None


def _completes_call(frame: Frame) -> bool:
    """A `tool_call_update` that ends its call (`completed` or `failed`)."""
    update = session_update(frame)
    return (
        update is not None
        and update.get("sessionUpdate") == "tool_call_update"
        and update.get("status") in FINAL_STATUSES
        and isinstance(update.get("toolCallId"), str)
    )
