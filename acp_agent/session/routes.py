"""A child agent's route key: which tool call of its parent started it.

A child's route is `<parent route>/<key>`. The key is the spawning call's id; when the same call
id occurs again in the parent's log (some endpoints reuse `call_0`), the n-th occurrence is
`<call id>#<n>`; a child no tool call spawned is `#<n>`, the n-th such child of its parent. The
agents that make routes, the replay model that finds a log's route and the history replay that
finds a call's children all use these functions, so the three agree by construction.
"""

from __future__ import annotations

from collections import Counter


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
