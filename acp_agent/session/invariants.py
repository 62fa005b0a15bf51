"""The log invariants, checked incrementally: one event at a time against the state so far."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from acp_agent.kernel.tables import take
from acp_agent.session.errors import InvariantViolation
from acp_agent.session.events import OpaqueEvent, SessionEvent
from acp_agent.session.registry import EventRegistry


@dataclass
class LogState:
    """Where a log stands: `check(event)` refuses an event that breaks a rule, `apply(event)`
    advances past an accepted one. Rule names are part of the contract."""

    registry: EventRegistry = field(repr=False)
    next_seq: int = 0
    open_turn: int | None = None
    open_step: int | None = None
    last_turn: int = 0
    last_step: int = 0
    # call id -> step of every tool/call still waiting for its tool/result
    pending_calls: dict[str, int] = field(default_factory=dict)

    @property
    def balanced(self) -> bool:
        """No turn is open."""
        return self.open_turn is None

    def check(self, event: SessionEvent) -> None:
        """Raise InvariantViolation if `event` may not come next."""
        if event.seq != self.next_seq:
            raise InvariantViolation("seq-contiguous", f"expected seq {self.next_seq}, got {event.seq}")
        core = _CHECKS.get(event.type)
        if core is not None:
            core(self, event)
        # Asking the registry also refuses a prebuilt event of an unregistered type.
        elif (
            not isinstance(event, OpaqueEvent)
            and self.registry.invariant_class(event.type) == "turn"
            and self.open_turn is None
        ):
            raise InvariantViolation("turn-enclosed", f"{event.type} outside a turn")

    def check_chunk(self, seq: int, turn: int, step: int) -> None:
        """`check` for an `assistant/chunk` known by its envelope alone (a load that keeps the
        chunks on disk reads only what the rules need; a streamed chunk's `Session.append_chunk`,
        before its event is made)."""
        if seq != self.next_seq:
            raise InvariantViolation("seq-contiguous", f"expected seq {self.next_seq}, got {seq}")
        self._check_in_step("assistant/chunk", turn, step)

    def advance(self) -> None:
        """Advance past a chunk `check_chunk` accepted (no rule tracks more of it than its seq)."""
        self.next_seq += 1

    def copy(self) -> LogState:
        """An independent copy (the pending calls are not shared)."""
        return replace(self, pending_calls=dict(self.pending_calls))

    def apply(self, event: SessionEvent) -> None:
        """Advance past `event` (which `check` accepted)."""
        self.next_seq += 1
        update = _UPDATES.get(event.type)
        if update is not None:
            update(self, event.data)

    def _check_in_step(self, type: str, turn: int, step: int) -> None:
        if self.open_step is None or turn != self.open_turn or step != self.open_step:
            raise InvariantViolation("in-step", f"{type} names turn {turn} step {step} but {self._where()}")

    def _where(self) -> str:
        if self.open_turn is None:
            return "no turn is open"
        if self.open_step is None:
            return f"turn {self.open_turn} is open with no open step"
        return f"the open step is turn {self.open_turn} step {self.open_step}"


# --- checks -----------------------------------------------------------------------------------


def _check_turn_start(state: LogState, event: Any) -> None:
    turn = event.data.turn
    if state.open_turn is not None:
        raise InvariantViolation("turn-start-closed", f"turn/start {turn} while turn {state.open_turn} is open")
    if turn != state.last_turn + 1:
        raise InvariantViolation("turn-number", f"expected turn {state.last_turn + 1}, got {turn}")


def _check_step_start(state: LogState, event: Any) -> None:
    turn, step = event.data.turn, event.data.step
    if turn != state.open_turn:
        raise InvariantViolation("step-in-turn", f"step/start names turn {turn} but {state._where()}")
    if state.open_step is not None:
        raise InvariantViolation("step-closed", f"step/start {step} while step {state.open_step} is open")
    if step != state.last_step + 1:
        raise InvariantViolation("step-number", f"expected step {state.last_step + 1}, got {step}")


def _check_in_step(state: LogState, event: Any) -> None:
    state._check_in_step(event.type, event.data.turn, event.data.step)


def _check_tool_call(state: LogState, event: Any) -> None:
    _check_in_step(state, event)
    call_id = event.data.call_id
    if call_id in state.pending_calls:
        raise InvariantViolation("call-unique", f"tool/call {call_id!r} is already pending")


def _check_tool_result(state: LogState, event: Any) -> None:
    _check_in_step(state, event)
    call_id = event.data.call_id
    # Pending calls all belong to the open step: step/end refuses to close a step with any.
    if call_id not in state.pending_calls:
        raise InvariantViolation("result-matches-call", f"tool/result {call_id!r} answers no pending tool/call")


def _check_step_end(state: LogState, event: Any) -> None:
    turn, step = event.data.turn, event.data.step
    if state.open_step is None or turn != state.open_turn or step != state.open_step:
        raise InvariantViolation("step-end-matches", f"step/end names turn {turn} step {step} but {state._where()}")
    if state.pending_calls:
        pending = ", ".join(repr(call_id) for call_id in state.pending_calls)
        raise InvariantViolation("step-end-pending", f"step/end {step} with tool calls pending: {pending}")


def _check_turn_end(state: LogState, event: Any) -> None:
    turn = event.data.turn
    if state.open_step is not None:
        raise InvariantViolation("turn-end-step-open", f"turn/end {turn} while step {state.open_step} is open")
    if turn != state.open_turn:
        raise InvariantViolation("turn-end-matches", f"turn/end names turn {turn} but {state._where()}")


def _check_compaction(state: LogState, event: Any) -> None:
    data = event.data
    if state.open_turn is None or data.turn != state.open_turn or state.open_step is not None:
        raise InvariantViolation("compaction-between-steps", f"compaction names turn {data.turn} but {state._where()}")
    if not 0 <= data.cut_seq <= event.seq:
        raise InvariantViolation(
            "compaction-cut", f"cutSeq {data.cut_seq} is not a seq before the compaction ({event.seq})"
        )


_CHECKS: dict[str, Callable[[LogState, Any], None]] = {
    "turn/start": _check_turn_start,
    "step/start": _check_step_start,
    "assistant/chunk": _check_in_step,
    "assistant/message": _check_in_step,
    "tool/call": _check_tool_call,
    "tool/result": _check_tool_result,
    "step/end": _check_step_end,
    "turn/end": _check_turn_end,
    "compaction": _check_compaction,
}

# --- updates ----------------------------------------------------------------------------------


def _start_turn(state: LogState, data: Any) -> None:
    state.open_turn = state.last_turn = data.turn
    state.last_step = 0


def _start_step(state: LogState, data: Any) -> None:
    state.open_step = state.last_step = data.step


def _add_call(state: LogState, data: Any) -> None:
    state.pending_calls[data.call_id] = data.step


def _consume_call(state: LogState, data: Any) -> None:
    take(state.pending_calls, data.call_id)  # there: `_check_tool_result` made sure


def _end_step(state: LogState, data: Any) -> None:
    state.open_step = None


def _end_turn(state: LogState, data: Any) -> None:
    state.open_turn = None


_UPDATES: dict[str, Callable[[LogState, Any], None]] = {
    "turn/start": _start_turn,
    "step/start": _start_step,
    "tool/call": _add_call,
    "tool/result": _consume_call,
    "step/end": _end_step,
    "turn/end": _end_turn,
}
