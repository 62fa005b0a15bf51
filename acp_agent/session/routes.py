"""Routes: a top-level session's, and a child agent's key (which tool call of its parent started it).

A top-level session's route is `s<k>`, the k-th of its process; in a process that runs as an
out-of-process child of another's agent (an ACP child), `<base>/s<k>`, the base being that agent's
route, so every agent of both processes has a route of its own and the routes say which process
runs which agent (`process_base`). A child's route is `<parent route>/<key>`. The key is the
spawning call's id; when the same call id occurs again in the parent's log (some endpoints reuse
`call_0`), the n-th occurrence is `<call id>#<n>`; a child no tool call spawned is `#<n>`, the
n-th such child of its parent. The agents that make routes, the replay model that finds a log's
route and the history replay that finds a call's children all use these functions, so the three
agree by construction.
"""

from __future__ import annotations

import re
from collections import Counter

_TOP_LEVEL = re.compile(r"s[0-9]+")


def top_level_route(k: int, base: str = "") -> str:
    """The route of the k-th (from 1) top-level session of a process whose route base is `base`."""
    return route_under(base, f"s{k}") if base else f"s{k}"


def process_base(route: str) -> str:
    """The route base of the process that runs the agent on `route`: what comes before its last
    top-level segment (`s<k>` after the first segment: a call id of that shape would read as
    one), "" for the first process."""
    parts = route.split("/")
    last = max((i for i, part in enumerate(parts) if i > 0 and _TOP_LEVEL.fullmatch(part)), default=0)
    return "/".join(parts[:last])


def call_key(call_id: str, occurrence: int) -> str:
    """The key of the `occurrence`-th (from 1) tool call with id `call_id` in one log."""
    return call_id if occurrence == 1 else f"{call_id}#{occurrence}"


def unspawned_key(n: int) -> str:
    """The key of a parent's n-th (from 1) child that no tool call spawned."""
    return f"#{n}"


def call_id_of(key: str) -> str:
    """The spawning call's id in a key ("" for a child no call spawned)."""
    return key.split("#", 1)[0]


def route_under(parent_route: str, key: str) -> str:
    """A child's route: its key under its parent's route."""
    return f"{parent_route}/{key}"


class CallKeys:
    """The keys of one log's tool calls, fed in log order: `add(call_id)` gives the next call's."""

    def __init__(self) -> None:
        self._seen: Counter[str] = Counter()

    def add(self, call_id: str) -> str:
        self._seen[call_id] += 1
        return call_key(call_id, self._seen[call_id])
