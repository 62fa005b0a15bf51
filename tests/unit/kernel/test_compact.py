"""The compaction of the models a session keeps: the same models in less memory."""

from __future__ import annotations

import sys
import tracemalloc

import pytest
from pydantic import BaseModel, ConfigDict

from acp_agent.kernel import Model
from acp_agent.kernel._compact import RELIED_ON, assembled, compacted, shared_fields, slots_of


def test_the_pydantic_slots_the_compaction_writes_are_there() -> None:
    # A pydantic release that renames one fails here (the models are then made without the savings).
    namespace = vars(BaseModel)
    assert all(hasattr(namespace.get(name), "__set__") for name in RELIED_ON)
    assert set(RELIED_ON) <= set(BaseModel.__slots__)
    assert slots_of(namespace) is not None
    assert slots_of({name: namespace[name] for name in RELIED_ON[1:]}) is None


class ToolCall(Model):
    tool_call_id: str
    raw_input: dict[str, int] | None = None


def test_a_model_assembled_from_typed_values_is_the_one_model_construct_makes_and_shares_its_set() -> None:
    fields = shared_fields({"tool_call_id", "raw_input"})
    made = assembled(ToolCall, {"tool_call_id": "t1", "raw_input": {"a": 1}}, fields)
    constructed = ToolCall.model_construct(tool_call_id="t1", raw_input={"a": 1})
    assert made == constructed
    assert (made.__pydantic_extra__, made.__pydantic_private__) == (None, None)
    assert made.model_fields_set is fields and constructed.model_fields_set == fields
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


def test_compacted_models_that_set_the_same_fields_share_one_set_of_their_names() -> None:
    first, second = compacted(ToolCall(tool_call_id="t1")), compacted(ToolCall.model_validate({"toolCallId": "t2"}))
    built = compacted(ToolCall.model_construct(tool_call_id="t3"))
    assert first.model_fields_set == {"tool_call_id"}
    assert first.model_fields_set is second.model_fields_set is built.model_fields_set
    other = compacted(ToolCall(tool_call_id="t1", raw_input={}))
    assert other.model_fields_set is not first.model_fields_set
    assert other.model_fields_set == {"tool_call_id", "raw_input"}


def test_a_changed_compacted_model_is_a_copy_and_leaves_what_it_shared_alone() -> None:
    first, second = compacted(ToolCall(tool_call_id="t1")), compacted(ToolCall(tool_call_id="t2"))
    copied = first.model_copy(update={"raw_input": {"a": 1}})
    assert copied.model_fields_set == {"tool_call_id", "raw_input"}
    assert first.model_fields_set is second.model_fields_set == {"tool_call_id"}
    assert first.model_dump(exclude_unset=True) == {"tool_call_id": "t1"}

    text, twin = compacted(Text(text="a")), compacted(Text(text="b"))
    assert text.model_extra == {} and text.model_extra is twin.model_extra  # one shared, empty
    noted = text.model_copy(update={"note": "mine"})
    assert noted.dump() == {"text": "a", "note": "mine"}
    assert text.dump() == {"text": "a"} and twin.model_extra == {}
    assert compacted(Text(text="d", kept=1)).model_extra == {"kept": 1}


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="CPython 3.13's split dicts are no smaller")
def test_compacted_models_take_less_memory() -> None:
    compacted(message())  # the class's first: its split dicts are made small from then on
    tracemalloc.start()
    try:
        kept = [message() for _ in range(100)]
        plain = tracemalloc.get_traced_memory()[0]
        for each in kept:
            compacted(each)
        assert tracemalloc.get_traced_memory()[0] < 0.6 * plain  # 0.39 on CPython 3.11
    finally:
        tracemalloc.stop()


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


def test_compacted_without_split_dicts_shares_the_sets_and_extras_and_keeps_each_dict() -> None:
    made = message()
    dicts = [made.__dict__, *(nested.__dict__ for nested in [*made.content, made.reply_to])]
    assert compacted(made, split=False) is made
    assert all(model.__dict__ is kept for model, kept in zip([made, *made.content, made.reply_to], dicts, strict=True))
    twin = compacted(message())
    assert made.model_fields_set is twin.model_fields_set and made.content[0].model_extra is twin.content[0].model_extra
    assert made.dump() == twin.dump()
