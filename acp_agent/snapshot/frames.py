"""What a JSON-RPC frame on the agent's stdout is: a response, an agent request, a notification.

Shared by the runner (which answers agent requests), the normalizer and the comparison.
"""

from __future__ import annotations

from typing import Any

Frame = Any
"""A parsed stdout line: usually a dict; a batch response is a list."""


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


def child_route(frame: Frame) -> str | None:
    """The route of the child agent a `session/update` comes from, when its `_meta` says so.

    The server attributes child activity with a `route` (any key ending in "route", at any depth of
    a `_meta` object on the params or the update); a route with a `/` names a child.
    """
    if session_update(frame) is None:
        return None
    params = frame["params"]
    for meta in (params.get("_meta"), params["update"].get("_meta")):
        route = _find_route(meta)
        if route is not None and "/" in route:
            return route
    return None


def _find_route(meta: Any) -> str | None:
    if not isinstance(meta, dict):
        return None
    for key, value in meta.items():
        if isinstance(value, str) and key.lower().endswith("route"):
            return value
        found = _find_route(value)
        if found is not None:
            return found
    return None
