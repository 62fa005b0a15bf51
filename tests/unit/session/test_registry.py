from __future__ import annotations

from typing import Literal

import pytest
from pydantic import ValidationError

from acp_agent.kernel.models import Model
from acp_agent.session import (
    CORE_EVENTS,
    AssistantChunkData,
    DuplicateEventType,
    EventRegistry,
    OpaqueEvent,
    SessionEvent,
    StepData,
    StepStartEvent,
    TextDelta,
    UnknownEventType,
    default_registry,
)
from tests.unit.session.builders import RetryData, RetryEvent


class OtherRetryEvent(SessionEvent):
    type: Literal["llm/retry"] = "llm/retry"
    data: RetryData


class UntypedData(Model):
    x: int


def test_default_registry_holds_the_core_types_with_their_classes() -> None:
    registry = default_registry()
    for event_cls in CORE_EVENTS:
        expected = "free" if event_cls.model_fields["type"].default == "turn/start" else "turn"
        assert registry.invariant_class(event_cls.model_fields["type"].default) == expected
    assert default_registry() is not registry


def test_register_and_dispose_a_plugin_type() -> None:
    registry = default_registry()
    dispose = registry.register(RetryEvent, "turn")
    obj = {"type": "llm/retry", "seq": 4, "time": 1, "data": {"attempt": 2}}
    event = registry.parse(obj)
    assert isinstance(event, RetryEvent)
    assert event.dump() == obj
    assert registry.invariant_class("llm/retry") == "turn"
    dispose()
    dispose()  # idempotent
    with pytest.raises(UnknownEventType, match="unknown session event type 'llm/retry'"):
        registry.parse(obj)


def test_a_stale_disposer_leaves_a_later_registration_alone() -> None:
    registry = EventRegistry()
    dispose = registry.register(RetryEvent, "turn")
    dispose()
    registry.register(OtherRetryEvent, "free")
    dispose()
    assert registry.invariant_class("llm/retry") == "free"
    assert registry.type_of(OtherRetryEvent) == "llm/retry"


def test_type_of_names_a_registered_class_only() -> None:
    registry = default_registry()
    assert registry.type_of(StepStartEvent) == "step/start"
    with pytest.raises(UnknownEventType, match="unknown session event type 'RetryEvent'"):
        registry.type_of(RetryEvent)
    dispose = registry.register(RetryEvent, "turn")
    assert registry.type_of(RetryEvent) == "llm/retry"
    with pytest.raises(UnknownEventType, match="'OtherRetryEvent'"):  # its name is taken, by another class
        registry.type_of(OtherRetryEvent)
    dispose()
    with pytest.raises(UnknownEventType, match="'RetryEvent'"):
        registry.type_of(RetryEvent)


def test_a_type_is_registered_once() -> None:
    registry = default_registry()
    registry.register(RetryEvent, "turn")
    with pytest.raises(DuplicateEventType, match="'llm/retry' is already registered"):
        registry.register(OtherRetryEvent, "turn")
    with pytest.raises(DuplicateEventType, match="'step/start'"):
        registry.register(StepStartEvent, "turn")


@pytest.mark.parametrize("event_cls", [SessionEvent, OpaqueEvent])
def test_an_event_class_must_name_its_type(event_cls: type[SessionEvent]) -> None:
    with pytest.raises(TypeError, match="needs a string default"):
        EventRegistry().register(event_cls, "free")


def test_the_invariant_class_is_turn_or_free() -> None:
    with pytest.raises(ValueError, match="'turn' or 'free', got 'sometimes'"):
        EventRegistry().register(RetryEvent, "sometimes")  # type: ignore[arg-type]


def test_invariant_class_of_an_unknown_type() -> None:
    with pytest.raises(UnknownEventType) as caught:
        EventRegistry().invariant_class("x/y")
    assert caught.value.type == "x/y"


@pytest.mark.parametrize("obj", [{"seq": 0, "time": 0, "data": {}}, {"type": ["x"], "seq": 0, "time": 0, "data": {}}])
def test_an_event_without_a_string_type_is_unknown(obj: dict[str, object]) -> None:
    with pytest.raises(UnknownEventType):
        default_registry().parse(obj)


def test_unknown_ignorable_events_are_kept_opaque_and_round_trip() -> None:
    obj = {"type": "future/thing", "seq": 7, "time": 3, "data": {"nested": [1, {"a": None}]}, "ignorable": True, "v": 2}
    event = default_registry().parse(obj)
    assert isinstance(event, OpaqueEvent)
    assert event.dump() == obj


@pytest.mark.parametrize("ignorable", [False, "yes", None])
def test_only_literally_ignorable_unknown_events_are_kept(ignorable: object) -> None:
    with pytest.raises(UnknownEventType, match="'future/thing'"):
        default_registry().parse({"type": "future/thing", "seq": 0, "time": 0, "data": {}, "ignorable": ignorable})


def test_malformed_known_events_raise_validation_errors() -> None:
    with pytest.raises(ValidationError):
        default_registry().parse({"type": "step/start", "seq": 0, "time": 0, "data": {"turn": 1}})


def test_build_keeps_a_model_as_it_is() -> None:
    data = AssistantChunkData(turn=1, step=1, chunk=TextDelta(index=0, text="x"))
    event = default_registry().build("assistant/chunk", 5, 99, data)
    assert event.data is data
    assert (event.type, event.seq, event.time, event.ignorable) == ("assistant/chunk", 5, 99, None)


def test_build_validates_mappings_in_either_case_style() -> None:
    registry = default_registry()
    camel = registry.build("tool/call", 0, 1, {"turn": 1, "step": 1, "callId": "c", "name": "n", "arguments": ""})
    snake = registry.build("tool/call", 0, 1, {"turn": 1, "step": 1, "call_id": "c", "name": "n", "arguments": ""})
    assert camel == snake
    assert camel.dump()["data"]["callId"] == "c"
    with pytest.raises(ValidationError):
        registry.build("tool/call", 0, 1, {"turn": 1, "step": 1})


def test_build_refuses_another_types_model_and_unknown_types() -> None:
    registry = default_registry()
    with pytest.raises(ValidationError, match="instance of AssistantChunkData"):
        registry.build("assistant/chunk", 0, 1, StepData(turn=1, step=1))
    with pytest.raises(UnknownEventType):
        registry.build("x/y", 0, 1, UntypedData(x=1))
