"""take: an entry out of a table, and the table's storage back once it is empty."""

from __future__ import annotations

import sys

from acp_agent.kernel.tables import take


def test_take_pops_an_entry_or_gives_the_default() -> None:
    table = {"a": 1, "b": 2}
    assert take(table, "a") == 1 and table == {"b": 2}
    assert take(table, "missing") is None and take(table, "missing", []) == []
    assert table == {"b": 2}


def test_a_table_emptied_by_take_gives_its_storage_back_and_one_emptied_by_pop_does_not() -> None:
    grown = {f"call_{i}": i for i in range(50)}
    popped = dict(grown)
    for key in list(grown):
        take(grown, key)
        popped.pop(key)
    assert grown == popped == {}
    assert sys.getsizeof(grown) == sys.getsizeof({}) < sys.getsizeof(popped)
