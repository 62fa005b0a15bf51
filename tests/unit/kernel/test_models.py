"""Model: camelCase on the wire, snake_case in Python, no `None` fields in the dump."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from acp_agent.kernel import Model


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


def test_a_model_is_plain_pydantic_each_instance_with_its_own_set_of_field_names() -> None:
    first, second = ToolCall(tool_call_id="t1"), ToolCall(tool_call_id="t2")
    assert first.model_fields_set == second.model_fields_set == {"tool_call_id"}
    assert first.model_fields_set is not second.model_fields_set
    second.raw_input = {"b": 2}
    assert second.model_fields_set == {"tool_call_id", "raw_input"} and first.model_fields_set == {"tool_call_id"}
