"""Named states: a lifecycle as an enum, the moves between its states as one table, and the one
check every change of state goes through."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Generic, TypeVar

S = TypeVar("S", bound=Enum)


class TransitionError(RuntimeError):
    """A move the table does not list was asked for: a bug of the caller."""


class Moves(Generic[S]):
    """Each state's next states (a state with none is final)."""

    def __init__(self, table: Mapping[S, Iterable[S]]) -> None:
        self._table = {state: frozenset(after) for state, after in table.items()}

    def after(self, state: S) -> frozenset[S]:
        return self._table[state]

    def move(self, owner: str, current: S, to: S) -> S:
        """`to`, once it is a next state of `current`; else `TransitionError` naming `owner`."""
        if to not in self._table[current]:
            raise TransitionError(f"{owner}: no move from {current.value} to {to.value}")
        return to
