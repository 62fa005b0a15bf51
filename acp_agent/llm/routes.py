"""Which agent each recorded log belongs to: its route (lineage path), from the logs alone.

A top-level session's route is `s<k>`; a child's is `<parent route>/<spawn call id>`, with `#<n>`
appended to the n-th reuse of a call id, and `<parent route>/#<n>` for a child no tool call spawned.
Headers written by this project carry `route`; for older fixtures a child is matched to the parent
call whose `prompt` argument equals the child's first own user message, ties broken by `createdAt`.
"""

from __future__ import annotations

from typing import Any

from acp_agent.llm.errors import ReplayError
from acp_agent.session.content import parse_arguments
from acp_agent.session.events import SessionHeader
from acp_agent.session.routes import CallKeys, call_id_of, route_under, unspawned_key

Lines = list[dict[str, Any]]


def assign_routes(logs: dict[str, Lines], primary: str) -> dict[str, str]:
    """Map each log's file name to its route. `primary` (the first top-level session) is `s1`."""
    headers = {name: SessionHeader.model_validate(lines[0]) for name, lines in logs.items()}
    routes = {name: header.route for name, header in headers.items() if header.route}
    routes.setdefault(primary, "s1")
    by_age = sorted(headers, key=lambda name: (headers[name].created_at, name))
    taken = set(routes.values())
    k = 1
    for name in by_age:
        if name not in routes and not headers[name].parent_session:
            while f"s{k}" in taken:
                k += 1
            routes[name] = f"s{k}"
            taken.add(routes[name])
    by_id = {header.id: name for name, header in headers.items()}
    claimed: dict[str, set[str]] = {}
    children = [name for name in by_age if name not in routes]
    while children:
        ready = [name for name in children if by_id.get(headers[name].parent_session or "") in routes]
        if not ready:
            name = children[0]
            raise ReplayError(f"fixture {name}: its parent session {headers[name].parent_session} is not routed")
        for name in ready:
            parent = by_id[headers[name].parent_session or ""]
            used = claimed.setdefault(parent, set())
            key = _spawn_key(logs[parent], headers[name], logs[name], used)
            used.add(key)
            routes[name] = route_under(routes[parent], key)
            children.remove(name)
    by_route: dict[str, str] = {}
    for name, route in routes.items():
        if route in by_route:
            raise ReplayError(f"fixtures {by_route[route]} and {name} both replay route {route!r}")
        by_route[route] = name
    return routes


def _spawn_key(parent: Lines, header: SessionHeader, child: Lines, used: set[str]) -> str:
    prompt = _first_prompt(child[1 + (header.seed_length or 0) :])
    calls = [(key, call_prompt) for key, call_prompt in _spawn_calls(parent) if key not in used]
    if header.spawn_call_id is not None:
        calls = [(key, p) for key, p in calls if call_id_of(key) == header.spawn_call_id]
        calls.sort(key=lambda call: call[1] != prompt)  # same id reused: the prompt decides
    else:
        calls = [(key, p) for key, p in calls if p is not None and p == prompt]
    if calls:
        return calls[0][0]
    n = 1
    while unspawned_key(n) in used:
        n += 1
    return unspawned_key(n)


def _spawn_calls(parent: Lines) -> list[tuple[str, str | None]]:
    """Every tool call of the parent as (route key, `prompt` argument or None), in log order."""
    keys = CallKeys()
    return [
        (keys.add(event["data"]["callId"]), _prompt_argument(event["data"]["arguments"]))
        for event in parent[1:]
        if event["type"] == "tool/call"
    ]


def _prompt_argument(arguments: str) -> str | None:
    try:
        value = parse_arguments(arguments)
    except ValueError:
        return None
    prompt = value.get("prompt") if isinstance(value, dict) else None
    return prompt if isinstance(prompt, str) else None


def _first_prompt(events: Lines) -> str | None:
    for event in events:
        if event["type"] == "user/message":
            return "".join(block.get("text", "") for block in event["data"]["content"])
    return None
