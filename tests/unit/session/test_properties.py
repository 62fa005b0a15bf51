"""Property tests: any valid log survives persistence, and any truncation of it is repaired."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acp_agent.session import Session, SessionStore, default_registry, read_log
from tests.unit.session.builders import close_step, end_turn, held, new_session, open_step, start_turn

# A turn is a list of steps; a step is (chunks, number of tool calls).
steps = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=0, max_size=3)
logs = st.tuples(st.lists(steps, max_size=4), st.booleans())
examples = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_ids = itertools.count()


def build(turns: list[list[tuple[int, int]]], open_at_end: bool) -> Session:
    session = new_session(session_id=f"s{next(_ids)}")
    calls = itertools.count()
    for index, turn_steps in enumerate(turns):
        turn = start_turn(session)
        for number, (chunks, n_calls) in enumerate(turn_steps, start=1):
            ids = [f"call_{next(calls)}" for _ in range(n_calls)]
            open_step(session, turn, number, calls=ids, chunks=chunks)
            if open_at_end and index == len(turns) - 1 and number == len(turn_steps):
                return session  # the last step stays open, calls pending
            close_step(session, turn, number, calls=ids)
        if not (open_at_end and index == len(turns) - 1):
            end_turn(session, turn)
    return session


@examples
@given(logs)
def test_a_valid_log_survives_persistence(tmp_path: Path, log: tuple[list[list[tuple[int, int]]], bool]) -> None:
    session = build(*log)
    store = SessionStore(tmp_path, registry=default_registry())
    store.attach(session)
    store.close()
    loaded = store.load(session.id)
    every, written = session.all_events(), session.next_seq
    assert [e.dump() for e in loaded.events if e.seq < written] == held(every)
    assert loaded.repaired == (not session.state.balanced)
    closing = [e for e in loaded.events if e.seq >= written]
    Session(loaded.header, registry=store.registry, seed=[*every, *closing])  # balanced and valid


@examples
@given(logs, st.floats(0, 1))
# A cut just before a chunk's newline: that chunk is read back from the file only until it is cut.
@example(log=([[(2, 2), (0, 0), (1, 2)], [], [], [(0, 2), (2, 2), (3, 2)]], False), cut_at=0.21755061940795445)
def test_any_truncation_is_repaired(
    tmp_path: Path, log: tuple[list[list[tuple[int, int]]], bool], cut_at: float
) -> None:
    session = build(*log)
    store = SessionStore(tmp_path, registry=default_registry())
    store.attach(session)
    store.close()
    path = store.path_of(session.id)
    data = path.read_bytes()
    every = session.all_events()  # before the cut: the chunks not in memory are read back from the file
    header_end = data.index(b"\n") + 1
    cut = header_end + int((len(data) - header_end) * cut_at)
    path.write_bytes(data[:cut])
    original = data[header_end:].split(b"\n")[:-1]
    parts = data[header_end:cut].split(b"\n")
    intact = sum(1 for part, line in zip(parts, original, strict=False) if part == line)
    torn = parts[-1] != b"" and parts[-1] != original[len(parts) - 1]
    loaded = read_log(path, store.registry)
    kept = every[:intact]
    assert [e.dump() for e in loaded.events if e.seq < intact] == held(kept)
    closing = [e for e in loaded.events if e.seq >= intact]
    assert {e.type for e in closing} <= {"tool/result", "step/end", "turn/end"}
    assert not closing or closing[-1].data.reason.kind == "interrupted"
    assert loaded.repaired == (bool(closing) or torn)
    Session(loaded.header, registry=store.registry, seed=[*kept, *closing])  # balanced and valid
