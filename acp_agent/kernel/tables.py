"""Tables of short-lived entries (per session, per call) that give their memory back."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


@overload
def take(table: MutableMapping[K, V], key: K) -> V | None: ...
@overload
def take(table: MutableMapping[K, V], key: K, default: D) -> V | D: ...
def take(table: MutableMapping[K, V], key: K, default: object = None) -> object:
    """`table.pop(key, default)`, and once the table is empty, its storage freed: a dict keeps
    what it grew to (the slots of every entry it held at once) until it is cleared."""
    value = table.pop(key, default)
    if not table:
        table.clear()
    return value
