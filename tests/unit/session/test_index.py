"""The index of stored sessions: kept at creation and each turn/end, written atomically, rebuilt
when missing, and kept true against the directory when another process writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acp_agent.session import Session, SessionHeader, SessionIndex, SessionStore, default_registry
from tests.unit.session.builders import close_step, complete_turn, end_turn, new_session, open_step, start_turn


FIELDS = ("cwd", "parentSession", "createdAt", "updatedAt", "title", "prompted", "size", "mtimeNs")


def index_file(root: Path) -> dict[str, dict[str, object]]:
    """The index file's entries, each with its fields named."""
    data = json.loads((root / "index.json").read_text())
    assert data["version"] == 1
    return {session_id: dict(zip(FIELDS, entry, strict=True)) for session_id, entry in data["sessions"].items()}


def stored(root: Path, session_id: str, *, turns: int = 1, cwd: str = "/work") -> Session:
    """A session written by a store of its own (another process, as far as the index can tell)."""
    store = SessionStore(root, registry=default_registry())
    header = SessionHeader(id=session_id, created_at=1, cwd=cwd)
    session = Session(header, registry=store.registry, clock=iter(range(1000, 10_000)).__next__)
    store.attach(session)
    for _ in range(turns):
        complete_turn(session)
    store.close()
    return session


def test_a_session_is_indexed_when_created_and_at_each_turn_end_not_per_event(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, registry=default_registry())
    session = new_session(session_id="s")
    store.attach(session)
    assert index_file(tmp_path)["s"]["prompted"] is False
    written = (tmp_path / "index.json").stat().st_mtime_ns
    turn = start_turn(session, "Fix   the\nbuild")
    open_step(session, turn, 1, chunks=5)
    close_step(session, turn, 1)
    assert (tmp_path / "index.json").stat().st_mtime_ns == written  # nothing until the turn ends
    end_turn(session, turn)
    entry = index_file(tmp_path)["s"]
    assert (entry["title"], entry["prompted"], entry["updatedAt"]) == ("Fix the build", True, session.events[-1].time)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["index.json", "s"]  # nothing left aside


def test_a_missing_or_unreadable_index_is_rebuilt_from_the_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    stored(tmp_path, "a")
    stored(tmp_path, "b", turns=2)
    (tmp_path / "index.json").unlink()
    assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "b"]
    assert sorted(index_file(tmp_path)) == ["a", "b"]
    for garbage in ("not json", '{"version": 1, "sessions": {"a": [3]}}', '{"version": 1, "sessions": {"a": [3, null, 1, 1, null, false, 1, 1]}}', '{"version": 2}'):
        (tmp_path / "index.json").write_text(garbage)
        assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "b"]
    assert "rebuilding the session index" in caplog.text


def test_a_session_directory_deleted_by_hand_drops_out(tmp_path: Path) -> None:
    stored(tmp_path, "a")
    stored(tmp_path, "b")
    index = SessionIndex(tmp_path)
    assert len(index.summaries()) == 2
    shutil.rmtree(tmp_path / "a")
    assert [s.id for s in index.summaries()] == ["b"]
    assert sorted(index_file(tmp_path)) == ["b"]


def test_what_another_process_wrote_meanwhile_is_found_and_a_lost_update_repaired(tmp_path: Path) -> None:
    stored(tmp_path, "a")
    index = SessionIndex(tmp_path)  # this process's view
    assert [s.id for s in index.summaries()] == ["a"]
    stale = json.loads((tmp_path / "index.json").read_text())
    # Another process creates a session and prompts "a" again; then a third one, which read the
    # index before, renames its own copy over it: both updates are lost from the file.
    stored(tmp_path, "b")
    later = stored(tmp_path, "a", turns=3)
    (tmp_path / "index.json").write_text(json.dumps(stale))
    summaries = {s.id: s for s in index.summaries()}
    assert sorted(summaries) == ["a", "b"]
    assert summaries["a"].updated_at == later.events[-1].time
    assert index_file(tmp_path)["a"]["updatedAt"] == later.events[-1].time  # written back


def test_children_are_found_through_the_index_and_a_cwd_keeps_its_own(tmp_path: Path) -> None:
    stored(tmp_path, "p", cwd="/one")
    stored(tmp_path, "q", cwd="/two/")
    store = SessionStore(tmp_path, registry=default_registry())
    child = Session(SessionHeader(id="c", created_at=1, cwd="/one", parent_session="p"), registry=store.registry)
    store.attach(child)
    store.close()
    index = SessionIndex(tmp_path)
    assert (tmp_path / "p" / "children").read_text() == "c\n"
    assert index.children_of("p") == ["c"]
    assert [s.id for s in index.summaries("/one")] == ["p"]  # a child is never a top-level session
    assert [s.id for s in index.summaries("/two")] == ["q"]
    (tmp_path / "p" / "children").unlink()  # a log from before children files: the index knows
    assert SessionIndex(tmp_path).children_of("p") == ["c"]
    (tmp_path / "p" / "children").write_text("c\nc\n")
    shutil.rmtree(tmp_path / "c")
    assert index.children_of("p") == []


def test_a_child_whose_parent_is_stored_elsewhere_is_indexed_alone(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, registry=default_registry())
    store.attach(Session(SessionHeader(id="c", created_at=1, parent_session="gone"), registry=store.registry))
    store.close()
    assert not (tmp_path / "gone").exists()
    assert store.children_of("gone") == ["c"]  # from the index


def test_an_index_that_cannot_be_written_costs_only_a_rebuild(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    stored(tmp_path, "a")
    (tmp_path / "index.json").unlink()
    (tmp_path / "index.json").mkdir()  # in the way of the rename
    assert [s.id for s in SessionIndex(tmp_path).summaries()] == ["a"]
    assert "cannot write the session index" in caplog.text
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_empty_or_missing_root_has_no_sessions(tmp_path: Path) -> None:
    assert SessionIndex(tmp_path / "none").summaries() == []
    assert SessionIndex(tmp_path / "none").children_of("x") == []
    assert not (tmp_path / "none").exists()
