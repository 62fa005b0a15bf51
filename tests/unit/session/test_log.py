from __future__ import annotations

import time
import weakref

import pytest

from acp_agent.session import (
    AssistantChunkEvent,
    InvariantViolation,
    Session,
    SessionEvent,
    SessionHeader,
    StepData,
    StreamedChunk,
    ToolError,
    TurnFailed,
    UnbalancedSeed,
    completed_turn_prefix,
    default_registry,
    now_ms,
)
from acp_agent.session.content import TextDelta
from acp_agent.session.errors import TurnsOutOfRange
from acp_agent.session.events import AssistantChunkEvent, StepEndEvent, StepStartEvent, TurnStartEvent, UserMessageEvent
from acp_agent.session.log import closing_events
from tests.unit.session.builders import (
    close_step,
    complete_turn,
    end_turn,
    new_session,
    open_step,
    start_turn,
)


def test_append_stamps_seq_and_clock_time() -> None:
    session = new_session()
    start_turn(session)
    assert [(event.seq, event.time) for event in session.events] == [(0, 1000), (1, 1001)]
    assert [event.type for event in session.events] == ["turn/start", "user/message"]


def test_the_default_clock_is_epoch_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    session = Session(SessionHeader(id="a", created_at=0), registry=default_registry())
    event = session.append(TurnStartEvent, {"turn": 1, "trigger": {"kind": "message"}})
    assert before <= event.time <= now_ms()


def test_header_properties() -> None:
    session = new_session(session_id="abc")
    assert (session.id, session.cwd, session.open_turn, session.next_turn) == ("abc", "/work", None, 1)
    start_turn(session)
    assert (session.open_turn, session.next_turn) == (1, 2)


def test_subscribers_see_each_kept_event_in_registration_order() -> None:
    session = new_session()
    seen: list[tuple[str, int]] = []
    session.subscribe(lambda event: seen.append(("a", event.seq)))
    dispose_b = session.subscribe(lambda event: seen.append(("b", event.seq)))
    session.append(TurnStartEvent, {"turn": 1, "trigger": {"kind": "message"}})
    with pytest.raises(InvariantViolation):
        session.append(TurnStartEvent, {"turn": 2, "trigger": {"kind": "message"}})
    dispose_b()
    dispose_b()
    session.append(UserMessageEvent, {"content": [], "source": {"kind": "user"}})
    assert seen == [("a", 0), ("b", 0), ("a", 1)]


def test_a_subscriber_without_chunks_sees_every_other_event() -> None:
    session = new_session()
    every: list[str] = []
    unchunked: list[str] = []
    session.subscribe(lambda event: every.append(event.type))
    dispose = session.subscribe(lambda event: unchunked.append(event.type), chunks=False)
    start_turn(session)
    open_step(session, 1, 1, chunks=2)
    assert every.count("assistant/chunk") == 3
    assert unchunked == [kind for kind in every if kind != "assistant/chunk"]
    dispose()
    close_step(session, 1, 1)
    assert unchunked[-1] == "assistant/message" and every[-1] == "step/end"


def test_a_subscriber_may_unsubscribe_while_notified() -> None:
    session = new_session()
    seen: list[str] = []

    def once(event: SessionEvent) -> None:
        seen.append("once")
        dispose_once()

    dispose_once = session.subscribe(once)
    session.subscribe(lambda event: seen.append("always"))
    start_turn(session)
    assert seen == ["once", "always", "always"]


def test_each_disposer_removes_one_subscription() -> None:
    session = new_session()
    seen: list[int] = []
    dispose_first = session.subscribe(seen.append)
    session.subscribe(seen.append)
    dispose_first()
    dispose_first()
    start_turn(session)
    assert seen == list(session.events)
    fields: list[StreamedChunk] = []
    dispose_chunks = session.subscribe(lambda event: None, chunks=fields.append)
    session.subscribe(lambda event: None, chunks=fields.append)
    dispose_chunks()
    dispose_chunks()
    session.append(StepStartEvent, StepData(turn=1, step=1))
    session.append_chunk(1, 1, TextDelta(index=0, text="x"))
    assert [streamed[0] for streamed in fields] == [3]


def test_a_disposer_that_ran_lets_go_of_its_session() -> None:
    session = new_session()
    dispose = session.subscribe(lambda event: None)
    held = weakref.ref(session)
    dispose()
    del session
    assert held() is None  # whatever still holds the disposer (a scope) does not keep the session
    dispose()


def test_the_seed_is_kept_as_it_is_and_numbering_continues() -> None:
    parent = new_session()
    complete_turn(parent, calls=["c1"])
    complete_turn(parent)
    child = new_session(session_id="child", seed=parent.events)
    assert all(a is b for a, b in zip(child.events, parent.events, strict=True))
    assert (child.next_turn, child.state.last_turn) == (3, 2)
    turn = start_turn(child)
    assert turn == 3
    assert child.events[-1].seq == len(parent.events) + 1


def test_a_seed_with_an_open_turn_is_refused() -> None:
    parent = new_session()
    complete_turn(parent)
    start_turn(parent)
    open_step(parent, 2, 1, calls=["c"])
    with pytest.raises(UnbalancedSeed, match="turn 2 is open"):
        new_session(seed=parent.events)


def test_a_seed_is_replayed_through_the_invariants() -> None:
    parent = new_session()
    complete_turn(parent)
    with pytest.raises(InvariantViolation, match="'seq-contiguous'"):
        new_session(seed=parent.events[1:])


def test_append_event_keeps_a_prebuilt_events_time() -> None:
    session = new_session()
    start_turn(session)
    event = default_registry().build("step/start", 2, 7, StepData(turn=1, step=1))
    assert session.append_event(event) is event
    assert session.events[-1].time == 7


def test_completed_turn_prefix_of_no_completed_turn() -> None:
    assert completed_turn_prefix([]) == []
    session = new_session()
    start_turn(session)
    open_step(session, 1, 1, calls=["c"])
    assert completed_turn_prefix(session.events) == []


def test_completed_turn_prefix_of_one_and_two_turns() -> None:
    session = new_session()
    complete_turn(session)
    one = list(session.events)
    assert completed_turn_prefix(session.events) == one
    complete_turn(session, calls=["c"])
    assert completed_turn_prefix(session.events) == list(session.events)
    # The first n ended turns (a fork after turn n).
    assert completed_turn_prefix(session.events, 0) == []
    assert completed_turn_prefix(session.events, 1) == one
    assert completed_turn_prefix(session.events, 2) == list(session.events)
    with pytest.raises(TurnsOutOfRange, match="ended 2 turn"):
        completed_turn_prefix(session.events, 3)


def test_completed_turn_prefix_leaves_out_the_turn_in_flight() -> None:
    session = new_session()
    complete_turn(session)
    complete_turn(session)
    done = list(session.events)
    start_turn(session)
    open_step(session, 3, 1, calls=["spawn"])
    prefix = completed_turn_prefix(session.events)
    assert prefix == done
    assert prefix[-1].type == "turn/end"
    new_session(seed=prefix)  # a valid seed


def test_a_turn_after_a_seed_can_complete() -> None:
    parent = new_session()
    complete_turn(parent)
    child = new_session(seed=completed_turn_prefix(parent.events))
    turn = start_turn(child)
    open_step(child, turn, 1)
    close_step(child, turn, 1)
    end_turn(child, turn)
    assert child.state.balanced


def test_events_appended_by_a_subscriber_reach_every_subscriber_in_order() -> None:
    session = new_session()
    seen: dict[str, list[int]] = {"first": [], "second": []}

    def first(event: SessionEvent) -> None:
        seen["first"].append(event.seq)
        if event.type == "turn/start":  # e.g. a plugin reacting to the turn
            session.append(UserMessageEvent, {"content": [], "source": {"kind": "plugin"}})
            session.append(UserMessageEvent, {"content": [], "source": {"kind": "plugin"}})

    session.subscribe(first)
    session.subscribe(lambda event: seen["second"].append(event.seq))
    event = session.append(TurnStartEvent, {"turn": 1, "trigger": {"kind": "message"}})
    assert event.seq == 0
    assert seen == {"first": [0, 1, 2], "second": [0, 1, 2]}


def test_a_failing_subscriber_does_not_keep_events_from_the_others() -> None:
    session = new_session()
    seen: list[int] = []

    def failing(event: SessionEvent) -> None:
        if event.type == "turn/start":
            session.append(UserMessageEvent, {"content": [], "source": {"kind": "plugin"}})
        raise RuntimeError(f"listener bug at {event.seq}")

    session.subscribe(failing)
    session.subscribe(lambda event: seen.append(event.seq))
    with pytest.raises(RuntimeError, match="listener bug at 0"):  # the first failure
        session.append(TurnStartEvent, {"turn": 1, "trigger": {"kind": "message"}})
    assert len(session.events) == 2
    assert seen == [0, 1]
    with pytest.raises(RuntimeError, match="listener bug at 2"):
        session.append(StepStartEvent, {"turn": 1, "step": 1})
    assert seen == [0, 1, 2]


def test_an_ignorable_append_is_marked_so() -> None:
    session = Session(SessionHeader(id="s", created_at=0), registry=default_registry())
    event = session.append(TurnStartEvent, {"turn": 1, "trigger": {"kind": "message"}}, ignorable=True)
    assert event.dump()["ignorable"] is True
    assert "ignorable" not in session.append(UserMessageEvent, {"content": [], "source": {"kind": "user"}}).dump()


# --- memory: what a session holds once a store holds its log ---------------------------------


def test_an_archived_session_lets_go_of_its_chunks_and_reads_them_back() -> None:
    session = new_session()
    complete_turn(session)
    every = list(session.events)
    read_back: list[int] = []

    def archive() -> list[SessionEvent]:
        read_back.append(1)
        return every

    session.archive(archive)
    assert session.all_events() == every and read_back == [1]
    start_turn(session)
    open_step(session, 2, 1, chunks=3)
    assert "assistant/chunk" not in [event.type for event in session.events]
    assert session.next_seq == len(every) + 8  # turn/start, user/message, step/start, 4 chunks, message
    # What the store has not written (here: all of the second turn) comes from memory.
    assert [e.seq for e in session.all_events()] == [
        *range(len(every)),
        *(e.seq for e in session.events_from(len(every))),
    ]
    assert [e.type for e in session.events_from(session.next_seq - 1)] == ["assistant/message"]
    assert session.events_from(session.next_seq) == []


def test_a_session_that_left_events_on_disk_needs_its_store_to_read_them() -> None:
    source = new_session()
    complete_turn(source)
    kept = [event for event in source.events if event.type != "assistant/chunk"]
    session = Session(source.header, registry=default_registry(), seed=kept, state=source.state)
    assert session.next_seq == source.next_seq and list(session.events) == kept
    session.append(TurnStartEvent, {"turn": 2, "trigger": {"kind": "message"}})
    assert source.next_seq == session.next_seq - 1  # the state was copied, not shared
    with pytest.raises(RuntimeError, match="no store holds it"):
        session.all_events()


def test_append_chunk_logs_and_shows_what_append_does() -> None:
    made = []
    for by_chunk in (False, True):
        session = new_session()
        start_turn(session)
        session.append(StepStartEvent, StepData(turn=1, step=1))
        seen: list[SessionEvent] = []
        fields: list[StreamedChunk] = []
        session.subscribe(seen.append)
        session.subscribe(lambda event: None, chunks=fields.append)
        session.subscribe(seen.append)  # a second reader of events is shown the same event
        chunk = TextDelta(index=0, text="x")
        if by_chunk:
            session.append_chunk(1, 1, chunk)
        else:
            session.append(AssistantChunkEvent, {"turn": 1, "step": 1, "chunk": chunk})
        assert len(seen) == 2 and seen[0] is seen[1]
        made.append((seen[0], fields, session.next_seq, list(session.events)))
    assert made[0] == made[1]
    assert made[1][1] == [(3, 1003, 1, 1, made[1][0].data.chunk)] and made[1][3][-1] is made[1][0]


def test_a_chunk_subscriber_is_shown_no_event_and_the_others_are_made_one_when_they_need_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[int] = []
    streamed_event = AssistantChunkEvent.streamed

    def counted(fields: StreamedChunk) -> AssistantChunkEvent:
        made.append(fields[0])
        return streamed_event(fields)

    monkeypatch.setattr(AssistantChunkEvent, "streamed", counted)
    session = new_session()
    session.archive(list)  # a store holds the log: the chunks are not kept in memory
    start_turn(session)
    session.append(StepStartEvent, StepData(turn=1, step=1))
    fields: list[StreamedChunk] = []
    others: list[SessionEvent] = []
    order: list[str] = []
    session.subscribe(lambda event: None, chunks=fields.append)
    session.subscribe(others.append, chunks=False)
    session.append_chunk(1, 1, TextDelta(index=0, text="x"))
    assert len(fields) == 1 and made == [] and others == []
    stop = session.subscribe(lambda event: order.append(f"event {event.seq}"))
    session.subscribe(lambda event: order.append(f"again {event.seq}"))
    session.subscribe(lambda event: None, chunks=lambda streamed: order.append(f"fields {streamed[0]}"))
    session.append_chunk(1, 1, TextDelta(index=0, text="y"))
    assert order == ["event 4", "again 4", "fields 4"] and made == [4]  # in the order they subscribed; one event
    stop()
    session.append_chunk(1, 1, TextDelta(index=0, text="z"))
    assert order[3:] == ["again 5", "fields 5"] and made == [4, 5]


@pytest.mark.parametrize("archived", [False, True], ids=["in memory", "held by a store"])
def test_a_chunk_appended_by_a_chunk_subscriber_is_delivered_after_the_current_one(archived: bool) -> None:
    session = new_session()
    if archived:  # the chunks are delivered as their fields, the one appended meanwhile too
        session.archive(list)
    start_turn(session)
    session.append(StepStartEvent, StepData(turn=1, step=1))
    seen: list[tuple[str, int]] = []

    def echo(streamed: StreamedChunk) -> None:
        seen.append(("first", streamed[0]))
        if streamed[0] == 3:
            session.append_chunk(1, 1, TextDelta(index=0, text="echo"))

    session.subscribe(lambda event: None, chunks=echo)
    session.subscribe(lambda event: None, chunks=lambda streamed: seen.append(("second", streamed[0])))
    session.append_chunk(1, 1, TextDelta(index=0, text="x"))
    assert seen == [("first", 3), ("second", 3), ("first", 4), ("second", 4)]
    assert [event.seq for event in session.events][-2:] == ([1, 2] if archived else [3, 4])


def test_a_chunk_marked_ignorable_is_refused() -> None:
    session = new_session()
    start_turn(session)
    session.append(StepStartEvent, StepData(turn=1, step=1))
    with pytest.raises(ValueError, match="never ignorable"):
        session.append(
            AssistantChunkEvent, {"turn": 1, "step": 1, "chunk": TextDelta(index=0, text="x")}, ignorable=True
        )
    assert session.next_seq == 3


def test_append_chunk_refuses_a_chunk_outside_the_open_step_and_logs_nothing() -> None:
    session = new_session()
    start_turn(session)
    seen: list[SessionEvent] = []
    session.subscribe(seen.append)
    with pytest.raises(InvariantViolation, match="no open step"):
        session.append_chunk(1, 1, TextDelta(index=0, text="x"))
    session.append(StepStartEvent, StepData(turn=1, step=1))
    with pytest.raises(InvariantViolation, match="turn 1 step 2"):
        session.append_chunk(1, 2, TextDelta(index=0, text="x"))
    assert session.next_seq == 3 and [event.type for event in seen] == ["step/start"]


class _Writer:
    """A log writer that fails while `failing` says so, and records what it wrote."""

    def __init__(self) -> None:
        self.failing: Exception | None = None
        self.lines: list[int] = []

    def write(self, event: SessionEvent) -> None:
        if self.failing is not None:
            raise self.failing
        self.lines.append(event.seq)

    def hold(self, streamed: StreamedChunk) -> None:
        self.write(AssistantChunkEvent.streamed(streamed))


def test_an_event_its_writer_refuses_is_neither_kept_nor_shown_and_the_log_goes_on() -> None:
    session = new_session()
    writer = _Writer()
    stop = session.write_with(writer)
    seen: list[int] = []
    session.subscribe(lambda event: seen.append(event.seq))
    start_turn(session)
    open_step(session, 1, 1)
    writer.failing = OSError(28, "No space left on device")
    with pytest.raises(OSError, match="No space"):
        session.append(StepEndEvent, StepData(turn=1, step=1))
    with pytest.raises(OSError, match="No space"):
        session.append_chunk(1, 1, TextDelta(index=0, text="a"))
    with pytest.raises(OSError, match="No space"):  # a chunk appended as an event is held too
        session.append(
            AssistantChunkEvent, {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}}
        )
    assert session.state.open_step == 1 and session.next_seq == len(seen) == len(writer.lines)
    writer.failing = None  # the disk is back
    session.append_chunk(1, 1, TextDelta(index=0, text="a"))
    close_step(session, 1, 1)
    assert seen == writer.lines == list(range(session.next_seq))
    stop()
    stop()  # once is enough
    end_turn(session, 1)
    assert writer.lines[-1] == session.next_seq - 2  # no longer written through


def test_closing_events_end_the_open_turn_from_where_the_log_stands() -> None:
    session = new_session()
    start_turn(session)
    open_step(session, 1, 1, calls=["a", "b"])
    error = ToolError(code="failed", message="why")
    closing = closing_events(session.state, 7, error, TurnFailed(message="because"))
    session.append_event(next(closing))  # one applied, then the caller stops: asked again later
    events = [
        session.append_event(event) for event in closing_events(session.state, 8, error, TurnFailed(message="because"))
    ]
    assert [(e.type, e.time) for e in events] == [("tool/result", 8), ("step/end", 8), ("turn/end", 8)]
    assert session.open_turn is None and session.events[-1].data.reason.message == "because"
