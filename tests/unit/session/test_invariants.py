from __future__ import annotations

from typing import Any

import pytest

from acp_agent.session import (
    InvariantViolation,
    LogState,
    OpaqueEvent,
    Session,
    StepData,
    StepStartEvent,
    UnknownEventType,
    default_registry,
)
from acp_agent.session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    CompactionEvent,
    EventOf,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)
from tests.unit.session.builders import (
    RetryData,
    RetryEvent,
    TitleData,
    TitleEvent,
    close_step,
    complete_turn,
    end_turn,
    new_session,
    open_step,
    start_turn,
)


def refused(session: Session, event_cls: type[EventOf[Any]], data: dict[str, Any]) -> InvariantViolation:
    """Append `data` expecting a refusal; the log must be unchanged afterwards."""
    before = len(session.events)
    with pytest.raises(InvariantViolation) as caught:
        session.append(event_cls, data)
    assert len(session.events) == before
    assert str(caught.value) == f"invariant '{caught.value.rule}' violated: {caught.value.detail}"
    return caught.value


def call(turn: int, step: int, call_id: str) -> dict[str, Any]:
    return {"turn": turn, "step": step, "callId": call_id, "name": "bash", "arguments": "{}"}


def result(turn: int, step: int, call_id: str) -> dict[str, Any]:
    return {"turn": turn, "step": step, "callId": call_id, "content": [], "isError": False}


def chunk(turn: int, step: int) -> dict[str, Any]:
    return {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}


def in_step(turn: int = 1, step: int = 1) -> Session:
    session = new_session()
    start_turn(session)
    for number in range(1, step):
        open_step(session, turn, number)
        close_step(session, turn, number)
    session.append(StepStartEvent, {"turn": turn, "step": step})
    return session


def test_seq_contiguous() -> None:
    session = in_step()
    event = StepStartEvent(seq=len(session.events) + 1, time=0, data=StepData(turn=1, step=2))
    with pytest.raises(InvariantViolation) as caught:
        session.append_event(event)
    assert caught.value.rule == "seq-contiguous"
    assert str(caught.value) == "invariant 'seq-contiguous' violated: expected seq 3, got 4"


def test_turn_start_closed() -> None:
    session = in_step()
    error = refused(session, TurnStartEvent, {"turn": 2, "trigger": {"kind": "message"}})
    assert error.rule == "turn-start-closed"
    assert error.detail == "turn/start 2 while turn 1 is open"


def test_turn_number() -> None:
    session = new_session()
    error = refused(session, TurnStartEvent, {"turn": 2, "trigger": {"kind": "message"}})
    assert (error.rule, error.detail) == ("turn-number", "expected turn 1, got 2")


def test_turn_number_continues_after_the_last_turn() -> None:
    session = new_session()
    complete_turn(session)
    for wrong in (1, 3):
        error = refused(session, TurnStartEvent, {"turn": wrong, "trigger": {"kind": "injection"}})
        assert (error.rule, error.detail) == ("turn-number", f"expected turn 2, got {wrong}")


def test_step_in_turn_without_a_turn() -> None:
    error = refused(new_session(), StepStartEvent, {"turn": 1, "step": 1})
    assert (error.rule, error.detail) == ("step-in-turn", "step/start names turn 1 but no turn is open")


def test_step_in_turn_names_the_open_turn() -> None:
    session = new_session()
    start_turn(session)
    error = refused(session, StepStartEvent, {"turn": 2, "step": 1})
    assert error.rule == "step-in-turn"
    assert error.detail == "step/start names turn 2 but turn 1 is open with no open step"


def test_step_closed() -> None:
    error = refused(in_step(), StepStartEvent, {"turn": 1, "step": 2})
    assert (error.rule, error.detail) == ("step-closed", "step/start 2 while step 1 is open")


def test_step_number() -> None:
    session = in_step(step=2)
    session.append(StepEndEvent, {"turn": 1, "step": 2})
    for wrong in (2, 4):
        error = refused(session, StepStartEvent, {"turn": 1, "step": wrong})
        assert (error.rule, error.detail) == ("step-number", f"expected step 3, got {wrong}")


def test_steps_restart_at_one_each_turn() -> None:
    session = new_session()
    complete_turn(session, calls=["c1"])  # two steps
    turn = start_turn(session)
    error = refused(session, StepStartEvent, {"turn": turn, "step": 3})
    assert error.rule == "step-number"
    session.append(StepStartEvent, {"turn": turn, "step": 1})


CLASSES: dict[str, type[EventOf[Any]]] = {
    "assistant/chunk": AssistantChunkEvent,
    "assistant/message": AssistantMessageEvent,
    "tool/call": ToolCallEvent,
    "tool/result": ToolResultEvent,
}


@pytest.mark.parametrize("type", list(CLASSES))
def test_in_step_needs_an_open_step(type: str) -> None:
    session = new_session()
    start_turn(session)
    data = {
        "assistant/chunk": chunk(1, 1),
        "assistant/message": {"turn": 1, "step": 1, "content": []},
        "tool/call": call(1, 1, "c"),
        "tool/result": result(1, 1, "c"),
    }[type]
    error = refused(session, CLASSES[type], data)
    assert (error.rule, error.detail) == ("in-step", f"{type} names turn 1 step 1 but turn 1 is open with no open step")


@pytest.mark.parametrize(("turn", "step"), [(1, 2), (2, 1)])
def test_in_step_names_the_open_step(turn: int, step: int) -> None:
    error = refused(in_step(), AssistantChunkEvent, chunk(turn, step))
    assert (error.rule, error.detail) == (
        "in-step",
        f"assistant/chunk names turn {turn} step {step} but the open step is turn 1 step 1",
    )


def test_result_matches_call() -> None:
    session = in_step()
    session.append(ToolCallEvent, call(1, 1, "c1"))
    error = refused(session, ToolResultEvent, result(1, 1, "c2"))
    assert (error.rule, error.detail) == ("result-matches-call", "tool/result 'c2' answers no pending tool/call")
    session.append(ToolResultEvent, result(1, 1, "c1"))
    error = refused(session, ToolResultEvent, result(1, 1, "c1"))  # consumed already
    assert error.rule == "result-matches-call"


def test_call_unique_while_pending_only() -> None:
    session = in_step()
    session.append(ToolCallEvent, call(1, 1, "call_0"))
    error = refused(session, ToolCallEvent, call(1, 1, "call_0"))
    assert (error.rule, error.detail) == ("call-unique", "tool/call 'call_0' is already pending")
    session.append(ToolResultEvent, result(1, 1, "call_0"))
    session.append(ToolCallEvent, call(1, 1, "call_0"))  # some endpoints reuse ids once answered
    assert session.state.pending_calls == {"call_0": 1}


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"turn": 1, "step": 2}, "the open step is turn 1 step 1"),
        ({"turn": 2, "step": 1}, "the open step is turn 1 step 1"),
    ],
)
def test_step_end_matches(data: dict[str, int], where: str) -> None:
    error = refused(in_step(), StepEndEvent, data)
    assert error.rule == "step-end-matches"
    assert error.detail == f"step/end names turn {data['turn']} step {data['step']} but {where}"


def test_step_end_matches_needs_an_open_step() -> None:
    session = new_session()
    start_turn(session)
    assert refused(session, StepEndEvent, {"turn": 1, "step": 1}).rule == "step-end-matches"


def test_step_end_pending() -> None:
    session = in_step()
    session.append(ToolCallEvent, call(1, 1, "a"))
    session.append(ToolCallEvent, call(1, 1, "b"))
    error = refused(session, StepEndEvent, {"turn": 1, "step": 1})
    assert (error.rule, error.detail) == ("step-end-pending", "step/end 1 with tool calls pending: 'a', 'b'")


def test_turn_end_step_open() -> None:
    error = refused(in_step(), TurnEndEvent, {"turn": 1, "reason": {"kind": "completed"}})
    assert (error.rule, error.detail) == ("turn-end-step-open", "turn/end 1 while step 1 is open")


def test_turn_end_matches() -> None:
    session = new_session()
    error = refused(session, TurnEndEvent, {"turn": 1, "reason": {"kind": "completed"}})
    assert (error.rule, error.detail) == ("turn-end-matches", "turn/end names turn 1 but no turn is open")
    start_turn(session)
    assert refused(session, TurnEndEvent, {"turn": 2, "reason": {"kind": "completed"}}).rule == "turn-end-matches"


def test_turn_enclosed_for_user_messages() -> None:
    error = refused(new_session(), UserMessageEvent, {"content": [], "source": {"kind": "user"}})
    assert (error.rule, error.detail) == ("turn-enclosed", "user/message outside a turn")


def test_turn_enclosed_for_plugin_types_of_class_turn() -> None:
    registry = default_registry()
    registry.register(RetryEvent, "turn")
    session = new_session(registry=registry)
    error = refused(session, RetryEvent, {"attempt": 1})
    assert (error.rule, error.detail) == ("turn-enclosed", "llm/retry outside a turn")
    start_turn(session)
    session.append(RetryEvent, RetryData(attempt=1))  # no step needed: nothing else is checked
    open_step(session, 1, 1)
    session.append(RetryEvent, RetryData(attempt=2))
    close_step(session, 1, 1)
    end_turn(session, 1)
    assert [event.type for event in session.events].count("llm/retry") == 2


def test_free_plugin_types_go_anywhere() -> None:
    registry = default_registry()
    registry.register(TitleEvent, "free")
    session = new_session(registry=registry)
    session.append(TitleEvent, TitleData(title="a"))
    start_turn(session)
    session.append(TitleEvent, TitleData(title="b"))
    assert session.state.balanced is False


def test_opaque_events_are_free() -> None:
    session = new_session()
    session.append_event(OpaqueEvent(type="future/x", seq=0, time=0, data={}, ignorable=True))
    assert len(session.events) == 1


def test_a_prebuilt_event_of_an_unregistered_type_is_refused() -> None:
    session = in_step()
    with pytest.raises(UnknownEventType):
        session.append_event(RetryEvent(seq=len(session.events), time=0, data=RetryData(attempt=1)))


def test_state_tracks_the_log() -> None:
    session = new_session()
    state = session.state
    assert (state.open_turn, state.open_step, state.last_turn, state.last_step) == (None, None, 0, 0)
    assert state.balanced
    start_turn(session)
    open_step(session, 1, 1, calls=["c"])
    assert (state.open_turn, state.open_step, state.last_turn, state.last_step) == (1, 1, 1, 1)
    assert state.pending_calls == {"c": 1}
    assert state.next_seq == len(session.events)
    assert not state.balanced
    close_step(session, 1, 1, calls=["c"])
    end_turn(session, 1)
    assert (state.open_turn, state.open_step, state.last_turn, state.last_step) == (None, None, 1, 1)
    assert state.balanced
    assert "registry" not in repr(LogState(default_registry()))


def compaction(turn: int = 1, cut_seq: int = 0) -> dict[str, Any]:
    return {"turn": turn, "summary": "s", "cutSeq": cut_seq, "tokens": 10, "trigger": "command"}


def test_a_compaction_sits_between_the_steps_of_its_own_turn() -> None:
    error = refused(in_step(), CompactionEvent, compaction())
    assert (error.rule, error.detail) == (
        "compaction-between-steps",
        "compaction names turn 1 but the open step is turn 1 step 1",
    )
    error = refused(new_session(), CompactionEvent, compaction())
    assert (error.rule, error.detail) == ("compaction-between-steps", "compaction names turn 1 but no turn is open")
    session = new_session()
    start_turn(session)
    assert refused(session, CompactionEvent, compaction(turn=2)).rule == "compaction-between-steps"
    error = refused(session, CompactionEvent, compaction(cut_seq=5))
    assert (error.rule, error.detail) == ("compaction-cut", "cutSeq 5 is not a seq before the compaction (2)")
    session.append(CompactionEvent, compaction(cut_seq=2))
    assert session.events[-1].data.cut_seq == 2
