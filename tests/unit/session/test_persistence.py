from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import PydanticSerializationError

from acp_agent.session import (
    INTERRUPTED_MESSAGE,
    AlreadyAttached,
    AssistantChunkData,
    AssistantMessageData,
    Finish,
    FinishReason,
    ForeignSessionsDirectory,
    InvalidSessionId,
    LoadedSession,
    LogUnwritable,
    MisplacedLog,
    OpaqueEvent,
    ReasoningDelta,
    Session,
    SessionBusy,
    SessionHeader,
    SessionLogDamaged,
    SessionNotFound,
    SessionStore,
    StepData,
    TextBlock,
    TextDelta,
    UnknownEventType,
    UnsupportedVersion,
    UnusableSessionsDirectory,
    default_registry,
    persistence,
    read_log,
)
from acp_agent.session.events import AssistantChunkEvent, AssistantMessageEvent, StepEndEvent, StepStartEvent
from acp_agent.session.index import INDEX_DIR
from acp_agent.session.persistence import _delta_line, _line, read_events
from tests.paths import UPSTREAM
from tests.unit.session.builders import (
    TitleData,
    TitleEvent,
    close_step,
    complete_turn,
    end_turn,
    held,
    jsonl,
    new_session,
    open_step,
    read_json_lines,
    start_turn,
    write_lines,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    store = SessionStore(tmp_path / "sessions", registry=default_registry())
    yield store
    store.close()


def dumps(session: Session) -> list[dict[str, object]]:
    return [session.header.dump(), *(event.dump() for event in session.all_events())]


# --- paths ------------------------------------------------------------------------------------


def test_one_directory_per_session(store: SessionStore) -> None:
    session_id = "0b7e9a52-5c1e-4a8e-9a57-8f0f2f6d3c11"
    assert store.path_of(session_id) == store.root / session_id / "session.jsonl"


@pytest.mark.parametrize("session_id", ["", ".", "..", "a/b", "../x", "a\\b", "a\0b"])
def test_ids_that_could_leave_the_root_are_refused(store: SessionStore, session_id: str) -> None:
    with pytest.raises(InvalidSessionId):
        store.path_of(session_id)


# --- writing ----------------------------------------------------------------------------------


def test_attach_writes_the_header_and_the_events_so_far(store: SessionStore) -> None:
    parent = new_session()
    complete_turn(parent)
    child = new_session(session_id="child", seed=parent.events)
    store.attach(child)
    path = store.path_of("child")
    assert path.read_text(encoding="utf-8").splitlines() == jsonl(child)
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "children",
        "lock",
        "session.jsonl",
    ]  # no staging file left


def test_every_event_is_in_the_file_when_append_returns(store: SessionStore) -> None:
    """Handed to the OS, not buffered: another reader (a process started after a kill -9) sees it.
    A streamed chunk's line is the exception (next test)."""
    session = new_session()
    store.attach(session)
    path = store.path_of(session.id)
    start_turn(session)
    assert read_json_lines(path) == dumps(session)
    open_step(session, 1, 1, calls=["c"])
    assert read_json_lines(path) == dumps(session)
    close_step(session, 1, 1, calls=["c"])
    end_turn(session, 1)
    assert read_json_lines(path) == dumps(session)


def test_a_streamed_chunk_is_held_until_the_stores_flush_or_its_logs_next_other_event(store: SessionStore) -> None:
    """The server flushes the store before each write to stdout, so the chunk's frame still
    follows its line; a read of the log back flushes first."""
    session, other = new_session(), new_session(session_id="s-2")
    store.attach(session), store.attach(other)
    path = store.path_of(session.id)
    for log in (session, other):
        start_turn(log)
        log.append(StepStartEvent, StepData(turn=1, step=1))
        log.append(AssistantChunkEvent, AssistantChunkData(turn=1, step=1, chunk=TextDelta(index=0, text="a")))
    on_disk = read_json_lines(path)
    assert on_disk == dumps(session)[:-1]  # held (`dumps` reads the log back: that flushed it)
    assert read_json_lines(path) == dumps(session)
    other_path = store.path_of(other.id)
    assert read_json_lines(other_path)[-1]["type"] == "step/start"
    store.flush()  # every log's held lines
    assert read_json_lines(other_path)[-1]["type"] == "assistant/chunk"
    session.append(AssistantChunkEvent, AssistantChunkData(turn=1, step=1, chunk=TextDelta(index=0, text="b")))
    session.append(AssistantChunkEvent, AssistantChunkData(turn=1, step=1, chunk=TextDelta(index=0, text="c")))
    session.append(
        AssistantChunkEvent, AssistantChunkData(turn=1, step=1, chunk=Finish(reason=FinishReason(kind="stop")))
    )
    session.append(AssistantMessageEvent, AssistantMessageData(turn=1, step=1, content=[TextBlock(text="abc")]))
    assert read_json_lines(path)[-5:] == [e.dump() for e in session.all_events()[-5:]]  # with the next event


def test_a_held_line_that_cannot_be_written_fails_the_sessions_next_line_not_the_flush(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    session = new_session()
    store.attach(session)
    start_turn(session)
    session.append(StepStartEvent, StepData(turn=1, step=1))
    session.append(AssistantChunkEvent, AssistantChunkData(turn=1, step=1, chunk=TextDelta(index=0, text="a")))
    fd = store._attached[session.id].file._fd
    saved, full = os.dup(fd), os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, fd)  # the disk is full from here on
    os.close(full)
    try:
        store.flush()  # the server's writer goes on
        assert "cannot write a session log" in caplog.text
        with pytest.raises(LogUnwritable, match=r"in .*/s-1: No space left on device \(ENOSPC\)"):
            session.append(AssistantMessageEvent, AssistantMessageData(turn=1, step=1, content=[TextBlock(text="a")]))
        assert session.events[-1].type == "step/start"  # refused: not kept, shown to nobody
        with pytest.raises(LogUnwritable):  # the next chunk is not held while writes fail
            session.append(AssistantChunkEvent, AssistantChunkData(turn=1, step=1, chunk=TextDelta(index=0, text="b")))
    finally:
        os.dup2(saved, fd)
        os.close(saved)
    session.append(AssistantMessageEvent, AssistantMessageData(turn=1, step=1, content=[TextBlock(text="a")]))
    session.append(StepEndEvent, StepData(turn=1, step=1))  # room again: what was held is written once, in order
    assert read_json_lines(store.path_of(session.id)) == dumps(session)


def test_close_flushes_the_open_turn(store: SessionStore) -> None:
    session = new_session()
    store.attach(session)
    start_turn(session)
    store.close()
    assert read_json_lines(store.path_of(session.id)) == dumps(session)
    store.close()  # nothing left to close


def test_detach_flushes_and_stops_writing(store: SessionStore) -> None:
    session = new_session()
    detach = store.attach(session)
    start_turn(session)
    detach()
    detach()
    open_step(session, 1, 1)
    assert len(read_json_lines(store.path_of(session.id))) == 3


def test_a_session_is_attached_once(store: SessionStore) -> None:
    session = new_session()
    detach = store.attach(session)
    with pytest.raises(AlreadyAttached, match="'s-1'"):
        store.attach(session)
    detach()
    store.attach(session)
    detach()  # stale: the new attachment keeps writing
    complete_turn(session)
    assert read_json_lines(store.path_of(session.id)) == dumps(session)


def resume(
    store: SessionStore, session_id: str, *, header: SessionHeader | None = None
) -> tuple[Session, LoadedSession]:
    loaded = store.load(session_id)
    resumed = Session(header or loaded.header, registry=store.registry, seed=loaded.events, state=loaded.state)
    store.attach(resumed, loaded=loaded)
    return resumed, loaded


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(['{"type":"turn/st'], id="torn line"),
        pytest.param([], id="unterminated last line"),
    ],
)
def test_reattaching_a_loaded_session_continues_its_file(store: SessionStore, tail: list[str]) -> None:
    """The kept part stays where it is (same file, same bytes); the torn tail gives way to the
    repaired one and what the session appends next."""
    session = new_session()
    complete_turn(session)
    start_turn(session)  # left open: the process stopped here
    path = store.path_of(session.id)
    path.parent.mkdir(parents=True)
    kept = jsonl(session)
    write_lines(path, kept + tail, tail="")
    inode = path.stat().st_ino
    resumed, loaded = resume(store, session.id)
    assert loaded.repaired
    complete_turn(resumed)
    assert path.stat().st_ino == inode
    assert path.read_bytes().startswith("\n".join(kept).encode() + b"\n")
    assert read_json_lines(path) == dumps(resumed)
    assert resumed.all_events()[session.next_seq].type == "turn/end"  # the repair


def one_turn_stored(store: SessionStore) -> tuple[Session, Path]:
    """A session of one complete turn, and its log as this store's file."""
    session = new_session()
    complete_turn(session)
    path = store.path_of(session.id)
    path.parent.mkdir(parents=True)
    write_lines(path, jsonl(session))
    return session, path


def test_a_load_that_repairs_nothing_leaves_the_file_as_it_was(store: SessionStore) -> None:
    session, path = one_turn_stored(store)
    os.utime(path, ns=(1, 1))
    before = path.read_bytes()
    resumed, loaded = resume(store, session.id)
    assert not loaded.repaired
    assert (path.read_bytes(), path.stat().st_mtime_ns) == (before, 1)  # the index's summary still holds
    complete_turn(resumed)
    assert read_json_lines(path) == dumps(resumed)


def test_a_loaded_session_whose_header_changed_is_rewritten_whole(store: SessionStore) -> None:
    session, path = one_turn_stored(store)
    moved = session.header.model_copy(update={"route": "s9"})
    resumed, _ = resume(store, session.id, header=moved)
    assert read_json_lines(path)[0]["route"] == "s9"
    assert read_json_lines(path) == dumps(resumed)
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "lock",
        "session.jsonl",
    ]  # a loaded log keeps its directory as it was


# --- one owner at a time, private files -------------------------------------------------------


def test_an_attached_session_is_locked_against_every_other_store(store: SessionStore) -> None:
    """Another store stands for another process: flock locks conflict between open files."""
    other = SessionStore(store.root, registry=store.registry, lock_wait=0.1)
    session = new_session()
    detach = store.attach(session)
    with pytest.raises(SessionBusy, match="'s-1' is open in another process"):
        other.attach(new_session())
    with pytest.raises(SessionBusy, match="open in another process"):
        anyio.run(other.claim, session.id)
    detach()  # the lock goes with the attachment
    unclaim = anyio.run(other.claim, session.id)
    with pytest.raises(AlreadyAttached):
        anyio.run(other.claim, session.id)
    with pytest.raises(SessionBusy):
        store.attach(session)
    unclaim()
    unclaim()
    store.attach(session)
    other.close()


def test_a_claim_waits_for_the_holder_to_let_go(store: SessionStore) -> None:
    session = new_session()
    detach = store.attach(session)
    other = SessionStore(store.root, registry=store.registry, lock_wait=10)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, detach)  # let go while the claim polls
            unclaim = await other.claim(session.id)
        other.attach(resume_of(other, session.id), loaded=other.load(session.id))
        unclaim()  # taken over by the attachment: nothing to let go

    anyio.run(main)
    with pytest.raises(SessionBusy):
        store.attach(session)
    other.close()  # lets go of attachments and claims alike
    store.attach(session)


def test_close_lets_go_of_a_claim_nothing_attached(store: SessionStore) -> None:
    session = new_session()
    store.attach(session)()
    anyio.run(store.claim, session.id)
    store.close()
    other = SessionStore(store.root, registry=store.registry, lock_wait=0)
    anyio.run(other.claim, session.id)  # not SessionBusy: the claim went with the close
    other.close()


def test_an_attach_whose_log_cannot_be_written_lets_go_of_the_lock(store: SessionStore) -> None:
    session = new_session()
    path = store.path_of(session.id)
    (path / "in-the-way").mkdir(parents=True)  # a non-empty directory where the log goes
    with pytest.raises(LogUnwritable, match=f"in {path.parent}: "):
        store.attach(session)
    shutil.rmtree(path)
    store.attach(session)  # not SessionBusy: the failed attach let go of the session's lock
    assert read_json_lines(path)[0]["id"] == session.id


def resume_of(store: SessionStore, session_id: str) -> Session:
    loaded = store.load(session_id)
    return Session(loaded.header, registry=store.registry, seed=loaded.events, state=loaded.state)


def test_a_claim_needs_a_stored_session(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        anyio.run(store.claim, "nobody")


def test_logs_and_their_directories_are_private_whatever_the_umask(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    previous = os.umask(0)
    try:
        store = SessionStore(tmp_path / "state" / "sessions", registry=default_registry())
        session = new_session()
        store.attach(session)
        complete_turn(session)
        store.close()
        resumed, _ = resume(store, session.id, header=session.header.model_copy(update={"route": "s2"}))
    finally:
        os.umask(previous)
    path = store.path_of(session.id)
    modes = {
        p: stat.S_IMODE(p.stat().st_mode)
        for p in (path, path.with_name("lock"), path.parent, store.root, store.root.parent)
    }
    assert modes == {
        path: 0o600,
        path.with_name("lock"): 0o600,
        path.parent: 0o700,
        store.root: 0o700,
        store.root.parent: 0o700,
    }
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755  # what existed already keeps its mode
    store.close()


def test_a_sessions_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "sessions"
    foreign.mkdir()
    if os.getuid() == 0:
        os.chown(foreign, 65534, 65534)
    else:  # pragma: no cover - the suite runs as root in CI; as a user, root's own directory
        foreign = Path("/")
    with pytest.raises(ForeignSessionsDirectory, match=f"sessions directory {foreign} belongs to uid"):
        SessionStore(foreign, registry=default_registry())


def test_a_sessions_directory_that_cannot_hold_logs_is_refused_at_construction_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("")
    read_only = tmp_path / "read-only"
    read_only.mkdir(mode=0o500)
    if os.getuid() == 0:  # root may write whatever the mode: the system is asked as for a user
        monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != read_only)
    cases = {
        in_the_way: "it is not a directory",
        in_the_way / "sessions": "it cannot be made (Not a directory)",
        read_only: "it is not writable",
    }
    for directory, why in cases.items():
        with pytest.raises(UnusableSessionsDirectory) as refused:
            SessionStore(directory, registry=default_registry())
        assert str(refused.value) == (
            f"sessions directory {directory} cannot hold session logs: {why} "
            "(set ACP_AGENT_SESSIONS to a directory of your own)"
        )


def test_a_missing_sessions_directory_is_made_private_at_construction(tmp_path: Path) -> None:
    root = tmp_path / "state" / "sessions"
    SessionStore(root, registry=default_registry()).close()
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


# --- reading back -----------------------------------------------------------------------------


def test_load_gives_back_what_was_written(store: SessionStore) -> None:
    session = new_session()
    store.attach(session)
    complete_turn(session, calls=["a", "b"])
    complete_turn(session)
    loaded = store.load(session.id)
    assert loaded.header == session.header
    assert [event.dump() for event in loaded.events] == [event.dump() for event in session.events]
    assert not loaded.repaired


def test_load_of_an_unknown_session(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound, match="'missing'"):
        store.load("missing")


def test_children_of_names_the_sessions_a_session_started(store: SessionStore) -> None:
    assert store.children_of("p") == []  # the root does not exist yet
    complete_turn(attached(store, "p"))
    for child_id in ("c2", "c1"):
        header = SessionHeader(id=child_id, created_at=1, cwd="/work", parent_session="p")
        store.attach(Session(header, registry=store.registry))
    (store.root / "empty-dir").mkdir()
    (store.root / "stray-file").write_text("x")
    assert store.children_of("p") == ["c1", "c2"]
    assert store.children_of("c1") == []


def test_the_index_leaves_out_a_log_whose_header_does_not_read_back(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    for name, header in (
        ("bad", "not json"),
        ("future", '{"type":"session","version":3,"id":"f","createdAt":1,"parentSession":"p"}'),
    ):
        path = store.path_of(name)
        path.parent.mkdir(parents=True)
        path.write_text(header + "\n")
    complete_turn(attached(store, "good"))
    assert [summary.id for summary in store.summaries()] == ["good"]
    assert store.children_of("p") == []
    assert "bad" in caplog.text and "unsupported session log version 3" in caplog.text


def attached(store: SessionStore, session_id: str) -> Session:
    session = new_session(session_id=session_id)
    store.attach(session)
    return session


def test_a_summary_has_the_first_user_message_and_the_last_events_time(store: SessionStore) -> None:
    assert store.summaries() == []  # the root does not exist yet
    prompted = attached(store, "prompted")
    turn = start_turn(prompted, "first words")
    open_step(prompted, turn, 1)
    close_step(prompted, turn, 1)
    end_turn(prompted, turn)
    complete_turn(prompted)
    attached(store, "quiet")
    store.close()
    summaries = {summary.id: summary for summary in store.summaries()}
    assert (summaries["prompted"].title, summaries["prompted"].prompted) == ("first words", True)
    assert summaries["prompted"].updated_at == prompted.events[-1].time
    assert (summaries["quiet"].title, summaries["quiet"].prompted) == (None, False)
    assert summaries["quiet"].updated_at == 1  # no event: the header's createdAt


def test_a_summary_reads_past_damage_and_a_torn_or_long_tail(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    session = attached(store, "s")
    complete_turn(session)
    store.close()
    path = store.path_of("s")
    lines = path.read_text().splitlines()
    last_time = session.events[-1].time
    huge = json.dumps({"type": "note/label", "seq": 99, "ignorable": True, "data": {"text": "x" * 100_000}})
    # Damage before the first user message is skipped; a torn last line and a last line longer than
    # the first tail read are read past (it has no time: the event before it counts).
    lines[1:1] = ["{oops", '{"type": "user/message", "data": {"content": "not a list"}}']
    path.write_text("\n".join([*lines, huge, '{"type":"turn/start","seq":9,"ti']))
    path.parent.joinpath("..", "bad").resolve().mkdir()
    store.path_of("bad").write_text("{}\n")
    shutil.rmtree(store.root / INDEX_DIR)  # the index is rebuilt from the logs
    [summary] = store.summaries()
    assert (summary.title, summary.prompted) == ("hi", True)
    assert summary.updated_at == last_time
    assert "not listing" in caplog.text and "bad" in caplog.text


def test_every_upstream_log_loads_unmodified(tmp_path: Path) -> None:
    if not UPSTREAM.is_dir():
        pytest.skip("the shared upstream scenarios are absent")
    paths = sorted(UPSTREAM.glob("*/session*.jsonl"))
    assert paths
    registry = default_registry()
    for index, path in enumerate(paths):
        loaded = read_log(path, registry)
        assert not loaded.repaired, path
        original = path.read_text(encoding="utf-8").splitlines()
        every = read_events(path, registry)
        assert [loaded.header.dump(), *(e.dump() for e in every)] == [json.loads(line) for line in original]
        assert [e.dump() for e in loaded.events] == held(every)
        # Written back through a store, the log is the same JSON line for line.
        store = SessionStore(tmp_path / str(index), registry=registry)
        store.attach(Session(loaded.header, registry=registry, seed=every))
        store.close()
        assert read_json_lines(store.path_of(loaded.header.id)) == [json.loads(line) for line in original]


# --- repair -----------------------------------------------------------------------------------


def two_turns_and_an_open_one() -> Session:
    session = new_session()
    complete_turn(session)
    complete_turn(session, calls=["c1"])
    start_turn(session)
    open_step(session, 3, 1, calls=["c2", "c3"])
    return session


def test_a_truncated_last_line_is_dropped(tmp_path: Path) -> None:
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    path = write_lines(tmp_path / "s.jsonl", [*lines, lines[1][:-9]], tail="")
    loaded = read_log(path, default_registry())
    assert loaded.repaired
    assert [e.dump() for e in loaded.events] == held(session.events)


def test_a_torn_multibyte_character_is_a_torn_line(tmp_path: Path) -> None:
    session = new_session()
    complete_turn(session)
    path = tmp_path / "s.jsonl"
    path.write_bytes(("\n".join(jsonl(session)) + "\n").encode() + '{"type":"é'.encode()[:-1])
    assert read_log(path, default_registry()).repaired


def test_an_open_turn_is_closed_as_interrupted(tmp_path: Path) -> None:
    session = two_turns_and_an_open_one()
    path = write_lines(tmp_path / "s.jsonl", jsonl(session))
    loaded = read_log(path, default_registry())
    assert loaded.repaired
    kept = session.next_seq
    assert [e.dump() for e in loaded.events if e.seq < kept] == held(session.events)
    last_time = session.events[-1].time
    error = {"code": "interrupted", "message": INTERRUPTED_MESSAGE}
    text = [{"type": "text", "text": "Error: interrupted: the process stopped before this call finished"}]
    assert [e.dump() for e in loaded.events if e.seq >= kept] == [
        {
            "type": "tool/result",
            "seq": kept,
            "time": last_time,
            "data": {"turn": 3, "step": 1, "callId": "c2", "content": text, "isError": True, "error": error},
        },
        {
            "type": "tool/result",
            "seq": kept + 1,
            "time": last_time,
            "data": {"turn": 3, "step": 1, "callId": "c3", "content": text, "isError": True, "error": error},
        },
        {"type": "step/end", "seq": kept + 2, "time": last_time, "data": {"turn": 3, "step": 1}},
        {
            "type": "turn/end",
            "seq": kept + 3,
            "time": last_time,
            "data": {"turn": 3, "reason": {"kind": "interrupted"}},
        },
    ]
    Session(loaded.header, registry=default_registry(), seed=[*session.events, *loaded.events[-4:]])  # balanced


def test_an_open_turn_between_steps_gets_only_a_turn_end(tmp_path: Path) -> None:
    session = new_session()
    start_turn(session)
    open_step(session, 1, 1)
    close_step(session, 1, 1)
    path = write_lines(tmp_path / "s.jsonl", jsonl(session))
    loaded = read_log(path, default_registry())
    assert [e.type for e in loaded.events if e.seq >= session.next_seq] == ["turn/end"]


def test_a_crash_mid_turn_keeps_the_open_turn_up_to_its_last_event(store: SessionStore) -> None:
    session = new_session()
    store.attach(session)
    complete_turn(session)
    start_turn(session)
    open_step(session, 2, 1, calls=["c"])
    written = session.next_seq
    # The process dies here (the store is never closed): what was appended is on disk.
    loaded = read_log(store.path_of(session.id), store.registry)
    assert loaded.repaired
    assert [e.dump() for e in loaded.events if e.seq < written] == held(session.all_events())
    assert [e.type for e in loaded.events if e.seq >= written] == ["tool/result", "step/end", "turn/end"]


@pytest.mark.parametrize("torn", [False, True], ids=["whole line", "torn line"])
def test_a_line_after_the_last_turn_end_that_breaks_the_invariants_is_dropped_only_when_torn(
    tmp_path: Path, torn: bool
) -> None:
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    turn_five = {"turn": 5, "trigger": {"kind": "message"}}
    bad = json.dumps({"type": "turn/start", "seq": session.next_seq, "time": 0, "data": turn_five})
    path = write_lines(tmp_path / "s.jsonl", [*lines, bad], tail="" if torn else "\n")
    if not torn:
        assert damaged(tmp_path, [*lines, bad]).line == len(lines) + 1
        return
    loaded = read_log(path, default_registry())
    assert loaded.repaired
    assert loaded.extent is not None and loaded.extent.events == session.next_seq
    assert [e.dump() for e in loaded.events] == held(session.events)


def test_an_unknown_type_and_what_follows_it_stay_in_the_file(store: SessionStore) -> None:
    """Written by a newer version, say: the load is refused and writes nothing."""
    session = new_session()
    complete_turn(session)
    start_turn(session)
    lines = jsonl(session)
    unknown = json.dumps({"type": "x/y", "seq": session.next_seq - 2, "time": 0, "data": {}})
    path = store.path_of(session.id)
    path.parent.mkdir(parents=True)
    write_lines(path, [*lines[:-2], unknown, lines[-1]])
    before = path.read_bytes()
    with pytest.raises(SessionLogDamaged, match="line 10: UnknownEventType: unknown session event type 'x/y'"):
        store.load(session.id)
    assert path.read_bytes() == before


def test_a_torn_last_line_longer_than_a_piece_is_dropped_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(persistence, "_LINE_PIECE", 64)
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    path = write_lines(tmp_path / "s.jsonl", [*lines, '{"type":"turn/start","data":"' + "y" * 300], tail="")
    loaded = read_log(path, default_registry())
    assert loaded.repaired and [e.dump() for e in loaded.events] == held(session.events)
    assert loaded.extent is not None and loaded.extent.end == len("\n".join(lines).encode())


def test_a_complete_log_is_not_repaired_by_a_free_tail(tmp_path: Path) -> None:
    registry = default_registry()
    registry.register(TitleEvent, "free")
    session = new_session(registry=registry)
    complete_turn(session)
    session.append(TitleEvent, TitleData(title="t"))
    loaded = read_log(write_lines(tmp_path / "s.jsonl", jsonl(session)), registry)
    assert not loaded.repaired
    assert isinstance(loaded.events[-1], TitleEvent)


# --- damage -----------------------------------------------------------------------------------


def damaged(tmp_path: Path, lines: list[str]) -> SessionLogDamaged:
    path = write_lines(tmp_path / "s.jsonl", lines)
    with pytest.raises(SessionLogDamaged) as caught:
        read_log(path, default_registry())
    assert caught.value.path == path
    assert f"session log {path} is damaged at line {caught.value.line}: " in str(caught.value)
    return caught.value


def test_an_unparsable_line_before_the_last_turn_end(tmp_path: Path) -> None:
    session = new_session()
    complete_turn(session)
    complete_turn(session)
    lines = jsonl(session)
    lines[3] = lines[3][:20]
    error = damaged(tmp_path, lines)
    assert error.line == 4
    assert error.reason.startswith("JSONDecodeError: ")


def test_a_line_that_breaks_the_invariants_before_the_last_turn_end(tmp_path: Path) -> None:
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    del lines[4]  # seq 3 is missing, so line 5 now holds seq 4
    error = damaged(tmp_path, lines)
    assert error.line == 5
    assert error.reason == "InvariantViolation: invariant 'seq-contiguous' violated: expected seq 3, got 4"
    assert isinstance(error.__cause__, Exception)


def test_an_unregistered_type_before_the_last_turn_end(tmp_path: Path) -> None:
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    lines[2] = json.dumps({"type": "plugin/gone", "seq": 1, "time": 0, "data": {}})
    error = damaged(tmp_path, lines)
    assert error.line == 3
    assert isinstance(error.__cause__, UnknownEventType)
    assert "unknown session event type 'plugin/gone'" in str(error)


def test_an_ignorable_unregistered_type_loads_and_round_trips(store: SessionStore) -> None:
    session = new_session()
    start_turn(session)
    session.append_event(OpaqueEvent(type="plugin/gone", seq=2, time=5, data={"k": [1]}, ignorable=True, extra=1))
    open_step(session, 1, 1)
    close_step(session, 1, 1)
    end_turn(session, 1)
    store.attach(session)
    store.close()
    loaded = store.load(session.id)
    assert isinstance(loaded.events[2], OpaqueEvent)
    assert [e.dump() for e in loaded.events] == [e.dump() for e in session.events]
    assert loaded.events[2].dump() == {
        "type": "plugin/gone",
        "seq": 2,
        "time": 5,
        "data": {"k": [1]},
        "ignorable": True,
        "extra": 1,
    }


def test_a_json_line_that_is_not_an_object(tmp_path: Path) -> None:
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    lines[1] = "[1, 2]"
    error = damaged(tmp_path, lines)
    assert (error.line, error.reason) == (2, "ValueError: expected a JSON object, got list")


@pytest.mark.parametrize("header", [None, "", "{", "[]", '{"type":"session","version":0}'])
def test_a_damaged_header(tmp_path: Path, header: str | None) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("" if header is None else header + "\n")
    with pytest.raises(SessionLogDamaged, match="at line 1"):
        read_log(path, default_registry())


def test_an_unknown_version_is_refused(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", ['{"type":"session","version":2,"id":"a","createdAt":0}'])
    with pytest.raises(UnsupportedVersion):
        read_log(path, default_registry())


# --- chunks left on disk ----------------------------------------------------------------------


def test_an_attached_session_reads_its_chunks_back_from_its_file(store: SessionStore) -> None:
    session = new_session()
    store.attach(session)
    turn = start_turn(session)
    open_step(session, turn, 1, chunks=5)
    close_step(session, turn, 1)
    end_turn(session, turn)
    assert "assistant/chunk" not in [event.type for event in session.events]
    assert [event.dump() for event in session.all_events()] == read_json_lines(store.path_of(session.id))[1:]


def test_a_chunk_is_checked_by_its_envelope_and_its_payload_when_it_is_read(tmp_path: Path) -> None:
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    chunk = json.loads(lines[4])
    assert chunk["type"] == "assistant/chunk"
    chunk["data"]["chunk"] = {"type": "text-delta"}  # no index, no text
    lines[4] = json.dumps(chunk)
    path = write_lines(tmp_path / "s.jsonl", lines)
    loaded = read_log(path, default_registry())  # its step logged its message: the chunk stays on disk
    assert not loaded.repaired and loaded.extent is not None and loaded.extent.events == session.next_seq
    with pytest.raises(ValueError, match="index"):
        read_events(path, default_registry())
    # A step without a message keeps its chunks, so it builds them: the bad one is damage.
    del lines[6]
    for later in range(6, len(lines)):
        event = json.loads(lines[later])
        event["seq"] -= 1
        lines[later] = json.dumps(event)
    error = damaged(tmp_path, lines)
    assert error.line == 5 and "index" in error.reason


@pytest.mark.parametrize(("field", "value"), [("chunk", ["not", "a", "chunk"]), ("step", None)])
def test_a_chunk_with_an_odd_envelope_is_parsed_in_full_and_refused(tmp_path: Path, field: str, value: object) -> None:
    session = new_session()
    complete_turn(session)
    complete_turn(session)
    lines = jsonl(session)
    chunk = json.loads(lines[4])
    chunk["data"][field] = value
    lines[4] = json.dumps(chunk)
    error = damaged(tmp_path, lines)
    assert error.line == 5 and error.reason.startswith("ValidationError: ")


@pytest.mark.parametrize("odd", ["seq", "turn"])
def test_a_chunk_whose_envelope_the_model_accepts_loads_through_the_full_parse(tmp_path: Path, odd: str) -> None:
    session = new_session()
    complete_turn(session)
    lines = jsonl(session)
    chunk = json.loads(lines[4])
    envelope = chunk if odd == "seq" else chunk["data"]
    envelope[odd] = str(envelope[odd])  # not what the writer writes: the full parse reads it as the int
    lines[4] = json.dumps(chunk)
    path = write_lines(tmp_path / "s.jsonl", lines)
    loaded = read_log(path, default_registry())
    assert not loaded.repaired and loaded.state.next_seq == session.next_seq
    assert [event.dump() for event in read_events(path, default_registry())] == [
        event.dump() for event in session.all_events()
    ]


def test_a_loaded_session_without_events_whose_header_changed_is_rewritten(store: SessionStore) -> None:
    session = new_session()
    path = store.path_of(session.id)
    path.parent.mkdir(parents=True)
    write_lines(path, jsonl(session))
    resumed, _ = resume(store, session.id, header=session.header.model_copy(update={"route": "s3"}))
    complete_turn(resumed)
    assert read_json_lines(path) == dumps(resumed)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from([TextDelta, ReasoningDelta]),
    text=st.text(),
    numbers=st.tuples(*[st.integers(min_value=0, max_value=2**53)] * 5),
)
def test_a_streamed_delta_is_logged_as_the_same_bytes_the_serializer_writes(
    kind: type[TextDelta] | type[ReasoningDelta], text: str, numbers: tuple[int, int, int, int, int]
) -> None:
    seq, time, turn, step, index = numbers
    data = AssistantChunkData(turn=turn, step=step, chunk=kind(index=index, text=text))
    event = default_registry().build("assistant/chunk", seq, time, data)
    serialized = type(event).__pydantic_serializer__.to_json(event, by_alias=True, exclude_none=True) + b"\n"
    assert _delta_line((seq, time, turn, step, data.chunk)) == serialized  # the joined line itself, not the fallback
    assert _line(event) == serialized
    assert json.loads(_line(event)) == event.dump()


def test_a_delta_whose_text_is_not_unicode_gets_the_serializers_error() -> None:
    chunk = TextDelta(index=0, text="\ud800")  # a lone surrogate, as a JSON string may decode to
    event = default_registry().build("assistant/chunk", 3, 0, AssistantChunkData(turn=1, step=1, chunk=chunk))
    with pytest.raises(PydanticSerializationError, match="surrogates not allowed"):
        _line(event)


def test_delete_takes_a_claim_and_removes_the_session_and_its_children(store: SessionStore) -> None:
    parent = new_session()
    store.attach(parent)()
    child = Session(SessionHeader(id="kid", created_at=0, parent_session=parent.id), registry=store.registry)
    store.attach(child)()
    with pytest.raises(SessionNotFound, match="not claimed here"):
        store.delete(parent.id)  # only under its lock
    with pytest.raises(SessionNotFound, match="not claimed here"):
        store.log_stored(parent.id, TitleEvent, TitleData(title="t"))
    anyio.run(store.claim, parent.id)
    store.delete(parent.id)
    assert sorted(p.name for p in store.root.iterdir()) == [INDEX_DIR]
    assert store.summaries() == []


def test_a_log_in_a_directory_not_its_own_is_refused_before_anything_is_made_there(store: SessionStore) -> None:
    session = new_session()
    complete_turn(session)
    copy = store.root / "copy"
    copy.mkdir(parents=True)
    write_lines(copy / "session.jsonl", jsonl(session))
    with pytest.raises(MisplacedLog, match=r"belongs to session 's-1', not to 'copy'.*rename it back to 's-1'"):
        anyio.run(store.claim, "copy")
    with pytest.raises(MisplacedLog):
        store.load("copy")
    assert sorted(p.name for p in copy.iterdir()) == ["session.jsonl"]  # no lock file either
    assert store.header_of("copy") == session.header
    assert store.header_of("nowhere") is None


def test_a_claim_leaves_a_header_that_does_not_read_to_the_load(store: SessionStore) -> None:
    directory = store.root / "bad"
    directory.mkdir(parents=True)
    (directory / "session.jsonl").write_text("{not json\n", encoding="utf-8")
    anyio.run(store.claim, "bad")
    with pytest.raises(SessionLogDamaged, match="line 1"):
        store.load("bad")
    assert store.header_of("bad") is None


def test_an_attach_whose_children_file_cannot_be_made_is_unwritable_and_lets_go_of_everything(
    store: SessionStore,
) -> None:
    session = new_session()
    children = store.path_of(session.id).parent / "children"
    children.mkdir(parents=True)  # a directory where the file goes
    with pytest.raises(LogUnwritable, match="Is a directory"):
        store.attach(session)
    children.rmdir()
    store.attach(session)  # not SessionBusy, not AlreadyAttached
    complete_turn(session)
    assert read_json_lines(store.path_of(session.id)) == dumps(session)
