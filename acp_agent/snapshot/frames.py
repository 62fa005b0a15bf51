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


def child_route(frame: Frame) -> str | None:
    """The route of the child agent a `session/update` comes from (its `_meta` names it)."""
    update = session_update(frame)
    meta = update.get("_meta") if update is not None else None
    attribution = meta.get(META_KEY) if isinstance(meta, dict) else None
    route = attribution.get("route") if isinstance(attribution, dict) else None
    return route if isinstance(route, str) else None


def canonical_order(frames: Sequence[Frame]) -> list[Frame]:
    """Frames with every window of concurrent children put in one order: the children's frames
    by route (each child's own order kept), then the parent's tool-call updates of the window.

    A window is a run of frames that are children's updates or the parent's `tool_call_update`s
    (whose order among the children's depends on which child finished first).
    """
    out: list[Frame] = []
    window: list[Frame] = []

    def flush() -> None:
        children = sorted((f for f in window if child_route(f) is not None), key=lambda f: child_route(f) or "")
        out.extend(children + [f for f in window if child_route(f) is None])
        window.clear()

    for frame in frames:
        update = session_update(frame)
        if update is not None and (child_route(frame) is not None or update.get("sessionUpdate") == "tool_call_update"):
            window.append(frame)
        else:
            flush()
            out.append(frame)
    flush()
    return out
