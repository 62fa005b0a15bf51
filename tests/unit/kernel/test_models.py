"""Model: camelCase on the wire, snake_case in Python, no `None` fields in the dump."""

from __future__ import annotations

import sys
import tracemalloc

import pytest
from pydantic import ConfigDict, ValidationError

from acp_agent.kernel import Model
from acp_agent.kernel.models import assembled, compacted, shared_fields


class ToolCall(Model):
    tool_call_id: str
    raw_input: dict[str, int] | None = None


def test_dump_uses_camel_case_and_omits_none() -> None:
    assert ToolCall(tool_call_id="t1").dump() == {"toolCallId": "t1"}
    assert ToolCall(tool_call_id="t1", raw_input={"a": 1}).dump() == {
        "toolCallId": "t1",
        "rawInput": {"a": 1},
    }


def test_both_the_alias_and_the_field_name_are_accepted_and_unknown_keys_are_not() -> None:
    assert ToolCall.model_validate({"toolCallId": "t1"}) == ToolCall(tool_call_id="t1")
    assert ToolCall.model_validate({"tool_call_id": "t1"}) == ToolCall(tool_call_id="t1")
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        ToolCall.model_validate({"toolCallId": "t1", "other": 1})


def test_models_that_set_the_same_fields_share_one_set_of_their_names_and_none_is_changed_through_another() -> None:
    first, second = ToolCall(tool_call_id="t1"), ToolCall.model_validate({"toolCallId": "t2"})
    built = ToolCall.model_construct(tool_call_id="t3")
    assert first.model_fields_set == {"tool_call_id"}
    assert first.model_fields_set is second.model_fields_set is built.model_fields_set
    assert ToolCall(tool_call_id="t1", raw_input={}).model_fields_set is not first.model_fields_set

    copied = first.model_copy(update={"raw_input": {"a": 1}})
    assert copied.model_fields_set == {"tool_call_id", "raw_input"}
    second.raw_input = {"b": 2}
    assert second.model_fields_set == {"tool_call_id", "raw_input"}
    assert first.model_fields_set == built.model_fields_set == {"tool_call_id"}
    assert first.model_dump(exclude_unset=True) == {"tool_call_id": "t1"}
    assert ToolCall(tool_call_id="t4").model_fields_set is first.model_fields_set


def test_a_model_assembled_from_typed_values_is_the_one_model_construct_makes_and_shares_its_set() -> None:
    fields = shared_fields({"tool_call_id", "raw_input"})
    made = assembled(ToolCall, {"tool_call_id": "t1", "raw_input": {"a": 1}}, fields)
    constructed = ToolCall.model_construct(tool_call_id="t1", raw_input={"a": 1})
    assert made == constructed
    assert (made.__pydantic_extra__, made.__pydantic_private__) == (None, None)
    assert made.model_fields_set is fields is constructed.model_fields_set
    assert made.dump() == {"toolCallId": "t1", "rawInput": {"a": 1}}


class Text(Model):
    model_config = ConfigDict(extra="allow")

    text: str


class Message(Model):
    role: str
    content: list[Text]
    reply_to: Text | None = None


def message() -> Message:
    return Message(role="user", content=[Text(text="hi"), Text(text="there")], reply_to=Text(text="q"))


def test_a_compacted_model_holds_the_same_values_and_its_nested_models_are_compacted_too() -> None:
    made = message()
    dumped, fields, values = made.dump(), made.model_fields_set, dict(made.__dict__)
    assert compacted(made) is made
    assert made.dump() == dumped and made.model_fields_set == fields and made == message()
    assert all(made.__dict__[name] is value for name, value in values.items())
    assert all(nested.model_extra is made.content[0].model_extra for nested in [*made.content, made.reply_to])


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="CPython 3.13's split dicts are no smaller")
def test_compacted_models_take_less_memory() -> None:
    compacted(message())  # the class's first: its split dicts are made small from then on
    tracemalloc.start()
    try:
        kept = [message() for _ in range(100)]
        plain = tracemalloc.get_traced_memory()[0]
        for each in kept:
            compacted(each)
        assert tracemalloc.get_traced_memory()[0] < 0.85 * plain  # 0.79 on CPython 3.11
    finally:
        tracemalloc.stop()


def test_compacted_models_change_one_at_a_time_their_extra_fields_included() -> None:
    first, second = compacted(Text(text="a")), compacted(Text(text="b"))
    assert first.model_extra == {} and first.model_extra is second.model_extra  # one shared, empty

    first.note = "mine"  # an extra field: added to a set of extras of its own
    first.text = "c"
    assert first.dump() == {"text": "c", "note": "mine"}
    assert second.dump() == {"text": "b"} and second.model_extra == {}
    assert compacted(Text(text="d", kept=1)).model_extra == {"kept": 1}


class Note(Model):
    title: str
    body: str
    tags: list[str] = []


def test_compacting_never_makes_a_model_larger() -> None:
    # A class whose instances were made and kept before its first compaction gets larger split
    # dicts (CPython 3.11): those models keep their own dicts.
    plain = [Note(title=f"t{i}", body="b") for i in range(3)]
    for note in [Note(title="a", body="b"), *plain, Note(title="c", body="d", tags=["x"])]:
        size, dumped = sys.getsizeof(note.__dict__), note.dump()
        assert sys.getsizeof(compacted(note).__dict__) <= size
        assert note.dump() == dumped
