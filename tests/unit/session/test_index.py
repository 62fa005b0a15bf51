"""The index of stored sessions: kept at creation and each turn/end, written atomically, rebuilt
when missing, and kept true against the directory when another process writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from acp_agent.session import Session, SessionHeader, SessionIndex, SessionStore, default_registry
from acp_agent.session import index as index_module
from acp_agent.session.index import INDEX_DIR, INDEX_FILE, JOURNAL_FILE, summarize
from acp_agent.session.roots import RootsData, RootsEvent
from tests.paths import ROOT
from tests.unit.session.builders import close_step, complete_turn, end_turn, new_session, open_step, start_turn

FIELDS = ("id", "parentSession", "createdAt", "updatedAt", "title", "prompted", "size", "mtimeNs")
OLD = 1_000_000_000  # a root modification time long past (not too recent to record)


def index_lines(root: Path) -> tuple[dict[str, Any], dict[str | None, bytes]]:
    """The index file's first line, and each working directory's line as written."""
    first, *lines, end = (root / INDEX_DIR / INDEX_FILE).read_bytes().split(b"\n")
    head = json.loads(first)
    assert head["version"] == 3 and end == b""
    return head, dict(zip(head["cwds"], lines, strict=True))


def journal_lines(root: Path) -> list[list[Any]]:
    """The journal's entries, in the order appended."""
    path = root / INDEX_DIR / JOURNAL_FILE
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def index_file(root: Path) -> dict[str, dict[str, object]]:
    """The index's entries by id, each with its fields named (its cwd included): the file's,
    with the journal's lines that the file does not hold applied over them."""
    entries: dict[str, dict[str, object]] = {}
    absorbed = None
    if (root / INDEX_DIR / INDEX_FILE).exists():
        head, lines = index_lines(root)
        absorbed = head["journal"]
        for cwd, line in lines.items():
            columns = json.loads(line)
            for values in zip(*(columns[name] for name in FIELDS), strict=True):
                entries[values[0]] = {"cwd": cwd, **dict(zip(FIELDS[1:], values[1:], strict=False))}
    journal = root / INDEX_DIR / JOURNAL_FILE
    if journal.exists():
        data = journal.read_bytes()
        if absorbed is not None and absorbed[0] == journal.stat().st_ino:
            data = data[absorbed[1] :]
        for line in data.splitlines():
            session_id, cwd, *values = json.loads(line)
            entries[session_id] = {"cwd": cwd, **dict(zip(FIELDS[1:], values, strict=False))}
    return entries


def index_state(root: Path) -> dict[str, bytes]:
    """The index's files as they are (to put back: what another process then wrote is lost)."""
    return {path.name: path.read_bytes() for path in (root / INDEX_DIR).iterdir()}


def put_back(root: Path, state: dict[str, bytes]) -> None:
    for path in (root / INDEX_DIR).iterdir():
        if path.name not in state:
            path.unlink()
    for name, data in state.items():
        (root / INDEX_DIR / name).write_bytes(data)


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


def age_root(root: Path, when: int = OLD) -> None:
    """Give the root a modification time old enough for the index to record it."""
    os.utime(root, ns=(when, when))


def test_a_session_is_indexed_when_created_and_at_each_turn_end_not_per_event(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, registry=default_registry())
    session = new_session(session_id="s")
    store.attach(session)
    assert index_file(tmp_path)["s"]["prompted"] is False
    assert len(journal_lines(tmp_path)) == 1  # appended: the file is not written for an update
    turn = start_turn(session, "Fix   the\nbuild")
    open_step(session, turn, 1, chunks=5)
    close_step(session, turn, 1)
    assert len(journal_lines(tmp_path)) == 1  # nothing until the turn ends
    end_turn(session, turn)
    assert len(journal_lines(tmp_path)) == 2
    entry = index_file(tmp_path)["s"]
    assert (entry["title"], entry["prompted"], entry["updatedAt"]) == ("Fix the build", True, session.events[-1].time)
    SessionIndex(tmp_path).summaries()  # a listing writes the file (it has none yet), the journal folded in
    head, lines = index_lines(tmp_path)
    journal = (tmp_path / INDEX_DIR / JOURNAL_FILE).stat()
    assert head["journal"] == [journal.st_ino, journal.st_size]
    assert index_file(tmp_path)["s"] == entry and list(lines) == ["/work"]
    assert sorted(path.name for path in tmp_path.iterdir()) == [INDEX_DIR, "s"]
    assert sorted(path.name for path in (tmp_path / INDEX_DIR).iterdir()) == [
        INDEX_FILE,
        JOURNAL_FILE,
    ]  # nothing left aside
    assert (tmp_path / INDEX_DIR).stat().st_mode & 0o777 == 0o700
    assert (tmp_path / INDEX_DIR / INDEX_FILE).stat().st_mode & 0o777 == 0o600
    assert (tmp_path / INDEX_DIR / JOURNAL_FILE).stat().st_mode & 0o777 == 0o600


def test_a_missing_or_unreadable_index_is_rebuilt_from_the_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stored(tmp_path, "a")
    stored(tmp_path, "b", turns=2)
    shutil.rmtree(tmp_path / INDEX_DIR)
    assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "b"]
    assert sorted(index_file(tmp_path)) == ["a", "b"]
    head = '{"version": 3, "root": null, "cwds": ["/work"], "journal": null}\n'
    for garbage in (
        "not json",
        "[" * 100_000 + "]" * 100_000,  # nested past the parser's stack: refused as any damage is
        head + "[" * 100_000 + "]" * 100_000 + "\n",  # so in a working directory's line
        '{"version": 2, "root": null, "cwds": []}',  # an older version's
        '{"version": 3, "root": [1], "cwds": []}\n',
        '{"version": 3, "root": null, "cwds": [], "journal": [1, "2"]}\n',
        head,  # a line missing
        head + '{"id": ["a"]}\n',
        '{"version": 3, "root": null, "cwds": [1], "journal": null}\n\n',  # a cwd that is not a string
        '{"version": 3, "root": null, "cwds": ["/work", "/work"], "journal": null}\n\n\n',  # one twice
        head + '{"id": ["a"], "parentSession": [null], "createdAt": [1], "updatedAt": [1], "title": [null],'
        ' "prompted": ["yes"], "size": [1], "mtimeNs": [1]}\n',
        *(
            head + '{"id": ["a"], "parentSession": [null], "createdAt": [1], "updatedAt": [1], "title": [null],'
            f' "prompted": [true], "size": [1], "mtimeNs": [1], "roots": {roots}}}\n'
            for roots in ('"/x"', "[1]", '["/x", "/y"]')  # not a column, not paths, one too many
        ),
    ):
        (tmp_path / INDEX_DIR / JOURNAL_FILE).unlink(missing_ok=True)  # the logs are all there is
        (tmp_path / INDEX_DIR / INDEX_FILE).write_text(garbage)
        caplog.clear()
        assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "b"]
        assert "rebuilding the session index" in caplog.text
        assert sorted(index_file(tmp_path)) == ["a", "b"]


def test_a_listing_of_one_cwd_parses_only_its_line_and_a_write_serializes_only_what_changed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stored(tmp_path, "a", cwd="/one")
    stored(tmp_path, "b", cwd="/two")
    SessionIndex(tmp_path).summaries()
    written = index_lines(tmp_path)
    stored(tmp_path, "a", cwd="/one", turns=2)  # updates: appended to the journal, the file as it was
    assert index_lines(tmp_path) == written
    os.utime(tmp_path / "a" / "session.jsonl", ns=(OLD, OLD))  # a listing then has something to correct
    SessionIndex(tmp_path).summaries()  # so it writes the file: /two's line as it was read
    assert (
        index_lines(tmp_path)[1]["/two"] == written[1]["/two"]
        and index_lines(tmp_path)[1]["/one"] != written[1]["/one"]
    )
    _, lines = index_lines(tmp_path)
    age_root(tmp_path)
    SessionIndex(tmp_path).summaries()  # the root's stamp recorded: a fresh index need not list it
    path = tmp_path / INDEX_DIR / INDEX_FILE
    path.write_bytes(path.read_bytes().replace(lines["/two"], b'{"id": 3}'))
    assert [s.id for s in SessionIndex(tmp_path).summaries("/one")] == ["a"]
    assert "rebuilding" not in caplog.text  # /two's line was never read
    assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "b"]
    assert "rebuilding the session index" in caplog.text and sorted(index_file(tmp_path)) == ["a", "b"]


def test_a_journal_grown_past_its_limit_is_folded_into_the_file_and_started_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored(tmp_path, "a")
    reader = SessionIndex(tmp_path)
    assert [s.id for s in reader.summaries()] == ["a"]
    journal = tmp_path / INDEX_DIR / JOURNAL_FILE
    first = journal.stat().st_ino, journal.stat().st_size
    assert index_lines(tmp_path)[0]["journal"] == list(first)  # the file holds the journal read
    monkeypatch.setattr(index_module, "_JOURNAL_FOLD", first[1])  # two lines
    later = stored(tmp_path, "a")  # its first update makes three: folded in, the journal started anew
    assert journal.stat().st_ino != first[0] and len(journal_lines(tmp_path)) == 1  # its turn's end
    head, lines = index_lines(tmp_path)
    assert head["journal"][0] == first[0] and head["journal"][1] > first[1] and list(lines) == ["/work"]
    assert index_file(tmp_path)["a"]["updatedAt"] == later.events[-1].time
    monkeypatch.setattr(index_module, "_JOURNAL_FOLD", 1 << 20)
    stored(tmp_path, "b")
    assert [line[0] for line in journal_lines(tmp_path)] == ["a", "b", "b"]  # the new journal: read from its start
    assert sorted(s.id for s in reader.summaries()) == ["a", "b"]
    assert {s.id: s.updated_at for s in reader.summaries()}["a"] == later.events[-1].time


def test_a_journal_line_still_being_written_waits_and_a_damaged_one_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stored(tmp_path, "a")
    stored(tmp_path, "z", cwd="/elsewhere")
    age_root(tmp_path)
    reader = SessionIndex(tmp_path)
    assert [s.title for s in reader.summaries("/work")] == ["hi"]
    assert [s.id for s in reader.summaries("/elsewhere")] == ["z"]  # both lines parsed: a's entry goes to one
    journal = tmp_path / INDEX_DIR / JOURNAL_FILE
    last = [line for line in journal_lines(tmp_path) if line[0] == "a"][-1]
    whole = json.dumps(last).replace('"hi"', '"from the journal"').encode()
    with journal.open("ab") as file:
        file.write(b'["a", "/work", 7]\n' + b"[" * 100_000 + b"\n" + whole[:10])  # damaged lines, then half of one
    assert [s.title for s in reader.summaries("/work")] == ["hi"]
    assert "skipping a line of the session index journal" in caplog.text
    with journal.open("ab") as file:
        file.write(whole[10:] + b"\n")
    assert [s.title for s in reader.summaries("/work")] == ["from the journal"]  # its stamp is the log's: trusted


def test_the_root_is_listed_again_only_when_it_changed_since_the_index_recorded_it(tmp_path: Path) -> None:
    stored(tmp_path, "a")
    SessionIndex(tmp_path).summaries()
    assert index_lines(tmp_path)[0]["root"] is None  # just modified: a change in the same tick would not show
    age_root(tmp_path)
    SessionIndex(tmp_path).summaries()
    recorded = index_lines(tmp_path)[0]["root"]
    assert recorded == [os.stat(tmp_path).st_nlink, OLD]
    # A directory renamed while the root keeps its time and link count goes unseen: the recorded
    # stamp is trusted, and the entry whose log is gone is not listed.
    os.rename(tmp_path / "a", tmp_path / "b")
    age_root(tmp_path)
    assert SessionIndex(tmp_path).summaries() == []
    os.rename(tmp_path / "b", tmp_path / "a")
    stored(tmp_path, "c")  # made since: the root's time changed, it is listed again
    assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "c"]


def test_an_update_lists_no_directory_and_the_next_listing_finds_what_it_did_not_see(tmp_path: Path) -> None:
    stored(tmp_path, "a")
    age_root(tmp_path)
    SessionIndex(tmp_path).summaries()
    recorded = index_lines(tmp_path)[0]["root"]
    stale = index_state(tmp_path)
    stored(tmp_path, "b")
    put_back(tmp_path, stale)  # b's update lost
    stored(tmp_path, "c")  # an update: it adds c to the file, lists nothing and keeps the root's stamp
    assert sorted(index_file(tmp_path)) == ["a", "c"]
    assert index_lines(tmp_path)[0]["root"] == recorded
    age_root(tmp_path, OLD + 10**9)  # another old time: not only the link count tells (it stays 1 on btrfs)
    assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "b", "c"]  # the root changed since
    assert sorted(index_file(tmp_path)) == ["a", "b", "c"]


def test_a_session_directory_deleted_by_hand_drops_out(tmp_path: Path) -> None:
    stored(tmp_path, "a")
    stored(tmp_path, "b")
    age_root(tmp_path)
    index = SessionIndex(tmp_path)
    assert len(index.summaries()) == 2
    shutil.rmtree(tmp_path / "a")
    assert [s.id for s in index.summaries()] == ["b"]
    assert sorted(index_file(tmp_path)) == ["b"]
    assert [s.id for s in SessionIndex(tmp_path).summaries()] == ["b"]


def test_a_directory_without_a_log_is_not_listed(tmp_path: Path) -> None:
    stored(tmp_path, "a")
    (tmp_path / "empty").mkdir()  # made by hand, or a session whose first write never happened
    assert [s.id for s in SessionIndex(tmp_path).summaries()] == ["a"]
    assert sorted(index_file(tmp_path)) == ["a"]


def test_a_damaged_line_found_while_catching_up_with_the_directory_rebuilds_the_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stored(tmp_path, "a")
    age_root(tmp_path)
    SessionIndex(tmp_path).summaries()  # the root's stamp recorded
    head, _ = index_lines(tmp_path)
    stored(tmp_path, "b")  # journalled, and the root changed since the recorded stamp
    (tmp_path / INDEX_DIR / INDEX_FILE).write_text(json.dumps(head) + '\n{"id": ["a"]}\n')
    age_root(tmp_path, OLD + 10**9)
    assert sorted(s.id for s in SessionIndex(tmp_path).summaries()) == ["a", "b"]
    assert "rebuilding the session index" in caplog.text
    assert index_lines(tmp_path)[0]["root"] == [os.stat(tmp_path).st_nlink, OLD + 10**9]
    assert sorted(index_file(tmp_path)) == ["a", "b"]


def test_a_log_with_no_event_after_its_header_was_last_updated_when_created(tmp_path: Path) -> None:
    path = tmp_path / "s" / "session.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps(SessionHeader(id="s", created_at=7, cwd="/work").dump()) + "\n")
    [summary] = SessionIndex(tmp_path).summaries()
    assert (summary.created_at, summary.updated_at, summary.prompted) == (7, 7, False)


def test_what_another_process_wrote_meanwhile_is_found_and_a_lost_update_repaired(tmp_path: Path) -> None:
    stored(tmp_path, "a")
    age_root(tmp_path)
    index = SessionIndex(tmp_path)  # this process's view
    assert [s.id for s in index.summaries()] == ["a"]
    stale = index_state(tmp_path)
    # Another process creates a session and prompts "a" again; then a third one, which read the
    # index before, renames its own copy over it and starts the journal anew: both updates lost.
    stored(tmp_path, "b")
    later = stored(tmp_path, "a", turns=3)
    put_back(tmp_path, stale)
    summaries = {s.id: s for s in index.summaries()}
    assert sorted(summaries) == ["a", "b"]
    assert summaries["a"].updated_at == later.events[-1].time
    assert index_file(tmp_path)["a"]["updatedAt"] == later.events[-1].time  # written back


def test_a_session_a_load_gave_another_cwd_moves_lines_even_past_a_lost_update(tmp_path: Path) -> None:
    stored(tmp_path, "a", cwd="/one")
    # An old modification time for the log: its rewrite (a header of the same size, "/two" for
    # "/one") may fall in the same tick of the file system's clock, which the stamp could not tell.
    age_root(tmp_path / "a" / "session.jsonl")
    age_root(tmp_path)
    SessionIndex(tmp_path).summaries()
    stale = index_state(tmp_path)
    store = SessionStore(tmp_path, registry=default_registry())
    loaded = store.load("a")
    header = loaded.header.model_copy(update={"cwd": "/two"})
    store.attach(Session(header, registry=store.registry, seed=loaded.events, state=loaded.state), loaded=loaded)
    store.close()
    assert (
        [s.id for s in SessionIndex(tmp_path).summaries("/one")],
        [s.id for s in SessionIndex(tmp_path).summaries("/two")],
    ) == ([], ["a"])
    put_back(tmp_path, stale)  # the move lost: "a" is in /one's line again
    assert SessionIndex(tmp_path).summaries("/one") == []  # its log changed: read again, of /two now
    assert [(s.id, s.cwd) for s in SessionIndex(tmp_path).summaries()] == [("a", "/two")]
    assert [s.id for s in SessionIndex(tmp_path).summaries("/two")] == ["a"]  # written back in its new line


WRITER = """
import sys
from pathlib import Path
from acp_agent.session import Session, SessionHeader, SessionStore, default_registry
from tests.unit.session.builders import complete_turn

root, prefix, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
store = SessionStore(root, registry=default_registry())
sessions = []
for n in range(count):
    session = Session(SessionHeader(id=f"{prefix}{n}", created_at=1, cwd=f"/{prefix}"), registry=store.registry)
    store.attach(session)
    sessions.append(session)
for _ in range(3):
    for session in sessions:
        complete_turn(session)
store.close()
print(" ".join(f"{s.id}={s.events[-1].time}" for s in sessions))
"""


def test_a_writer_in_another_process_at_the_same_time_loses_nothing_for_good(tmp_path: Path) -> None:
    command = [sys.executable, "-c", textwrap.dedent(WRITER), str(tmp_path)]
    others = [
        subprocess.Popen([*command, prefix, "25"], cwd=ROOT, stdout=subprocess.PIPE, text=True) for prefix in ("p", "q")
    ]
    outputs = [process.communicate(timeout=60)[0] for process in others]
    assert all(process.returncode == 0 for process in others)
    ends = dict(pair.split("=") for output in outputs for pair in output.split())
    assert len(ends) == 50
    for _ in range(2):  # the listing repairs what a lost update left behind, and writes it back
        listed = {s.id: s.updated_at for s in SessionIndex(tmp_path).summaries()}
        assert listed == {session_id: int(time) for session_id, time in ends.items()}
    assert {session_id: entry["updatedAt"] for session_id, entry in index_file(tmp_path).items()} == listed


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
    (tmp_path / INDEX_DIR / INDEX_FILE).mkdir()  # in the way of the rename
    assert [s.id for s in SessionIndex(tmp_path).summaries()] == ["a"]
    assert "cannot write the session index" in caplog.text
    assert not [p for p in (tmp_path / INDEX_DIR).iterdir() if p.name.endswith(".tmp")]


def test_a_journal_that_cannot_be_written_or_read_costs_only_the_staleness_checks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stored(tmp_path, "a")
    SessionIndex(tmp_path).summaries()
    (tmp_path / INDEX_DIR / JOURNAL_FILE).unlink()
    (tmp_path / INDEX_DIR / JOURNAL_FILE).mkdir()  # neither appended to nor read
    later = stored(tmp_path, "a", turns=2)
    new = stored(tmp_path, "b")
    assert "cannot write the session index" in caplog.text
    listed = {s.id: s.updated_at for s in SessionIndex(tmp_path).summaries()}
    assert listed == {"a": later.events[-1].time, "b": new.events[-1].time}
    assert "cannot read the session index journal" in caplog.text


def test_an_empty_or_missing_root_has_no_sessions(tmp_path: Path) -> None:
    assert SessionIndex(tmp_path / "none").summaries() == []
    assert SessionIndex(tmp_path / "none").children_of("x") == []
    assert not (tmp_path / "none").exists()


def rooted(root: Path, session_id: str, sets: list[list[str]], *, cwd: str = "/work") -> Session:
    """A stored session that logged the first of `sets` as its roots, then a turn, then the others."""
    store = SessionStore(root, registry=default_registry())
    header = SessionHeader(id=session_id, created_at=1, cwd=cwd)
    session = Session(header, registry=store.registry, clock=iter(range(1000, 10_000)).__next__)
    store.attach(session)
    session.append(RootsEvent, RootsData(directories=sets[0]))
    complete_turn(session)
    for directories in sets[1:]:
        session.append(RootsEvent, RootsData(directories=directories))
    store.close()
    return session


def test_the_roots_a_log_holds_last_are_indexed_and_written_only_for_sessions_that_have_some(tmp_path: Path) -> None:
    stored(tmp_path, "plain")
    rooted(tmp_path, "moved", [["/a", "/b"], ["/c", "/a"]])  # a load that named another set
    rooted(tmp_path, "dropped", [["/a"], []])  # and one that named none
    stored(tmp_path, "other", cwd="/other")
    fields = {line[0]: len(line) for line in journal_lines(tmp_path)}  # each session's last line
    assert fields == {"plain": 9, "moved": 10, "dropped": 9, "other": 9}  # a tenth field: roots
    expected = {"plain": [], "moved": ["/c", "/a"], "dropped": [], "other": []}
    listed = SessionIndex(tmp_path).summaries()
    assert {summary.id: summary.additional_directories for summary in listed} == expected
    _, lines = index_lines(tmp_path)
    work = json.loads(lines["/work"])
    assert dict(zip(work["id"], work["roots"], strict=True)) == {"plain": None, "moved": "/c\0/a", "dropped": None}
    assert "roots" not in json.loads(lines["/other"])  # a line where no session has roots: as before
    assert summarize(tmp_path / "moved" / "session.jsonl").additional_directories == ["/c", "/a"]
    for _ in range(2):  # from the file alone, then with no index at all: from the logs
        (tmp_path / INDEX_DIR / JOURNAL_FILE).unlink(missing_ok=True)
        listed = SessionIndex(tmp_path).summaries()
        assert {summary.id: summary.additional_directories for summary in listed} == expected
        shutil.rmtree(tmp_path / INDEX_DIR)


def test_an_index_written_before_roots_were_indexed_loads_its_entries_without_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rooted(tmp_path, "r", [["/a"]])
    age_root(tmp_path)
    SessionIndex(tmp_path).summaries()
    path = tmp_path / INDEX_DIR / INDEX_FILE
    head, lines = index_lines(tmp_path)
    old = json.loads(lines["/work"])
    del old["roots"]
    head["journal"] = None
    path.write_text(json.dumps(head) + "\n" + json.dumps(old) + "\n")  # as the index was written before
    journal = tmp_path / INDEX_DIR / JOURNAL_FILE
    journal.write_text(json.dumps([line[:7] + line[8:] for line in journal_lines(tmp_path)][-1]) + "\n")
    assert [summary.additional_directories for summary in SessionIndex(tmp_path).summaries()] == [[]]
    assert "rebuilding" not in caplog.text and "skipping" not in caplog.text
    session = SessionStore(tmp_path, registry=default_registry()).load("r")
    assert [event.type for event in session.events].count("session/roots") == 1
    os.utime(tmp_path / "r" / "session.jsonl", ns=(OLD, OLD))  # once its log changes, summarized again
    assert [summary.additional_directories for summary in SessionIndex(tmp_path).summaries()] == [["/a"]]
