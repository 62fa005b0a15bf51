"""`Moves`: a lifecycle's table of moves, and the one check a change of state goes through."""

from __future__ import annotations

from enum import Enum

import pytest

from acp_agent.kernel.states import Moves, S, TransitionError


class Door(Enum):
    OPEN = "open"
    SHUT = "shut"
    GONE = "gone"


DOOR = Moves({Door.OPEN: {Door.SHUT}, Door.SHUT: [Door.OPEN, Door.GONE], Door.GONE: ()})


def reachable(moves: Moves[S], start: S) -> set[S]:
    """Every state some run of moves from `start` reaches (`start` included)."""
    reached = {start}
    while True:
        more = {after for state in reached for after in moves.after(state)} - reached
        if not more:
            return reached
        reached |= more


def test_a_listed_move_is_made_and_any_other_is_refused_naming_its_owner() -> None:
    assert DOOR.move("the door", Door.OPEN, Door.SHUT) is Door.SHUT
    assert DOOR.after(Door.SHUT) == frozenset({Door.OPEN, Door.GONE})
    with pytest.raises(TransitionError, match="^the door: no move from open to gone$"):
        DOOR.move("the door", Door.OPEN, Door.GONE)
    with pytest.raises(TransitionError, match="no move from gone to open"):
        DOOR.move("the door", Door.GONE, Door.OPEN)
    assert reachable(DOOR, Door.OPEN) == set(Door) and reachable(DOOR, Door.GONE) == {Door.GONE}
