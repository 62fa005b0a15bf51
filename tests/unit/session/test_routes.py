"""The one rule for a child's route key, as the agents, the replay model and the history use it."""

from __future__ import annotations

import pytest

from acp_agent.session.content import MAX_ARGUMENTS_CHARS, ArgumentsRefused, arguments_text, parse_arguments
from acp_agent.session.routes import (
    CallKeys,
    call_id_of,
    call_key,
    process_base,
    route_under,
    top_level_route,
    unspawned_key,
)


def test_a_reused_call_id_is_numbered_from_its_second_occurrence() -> None:
    keys = CallKeys()
    assert [keys.add(call_id) for call_id in ("call_0", "call_1", "call_0", "call_0")] == [
        "call_0",
        "call_1",
        "call_0#2",
        "call_0#3",
    ]
    assert call_key("call_0", 3) == "call_0#3"
    assert call_id_of("call_0#3") == "call_0" and call_id_of(unspawned_key(2)) == ""
    assert route_under("s1/call_a", unspawned_key(2)) == "s1/call_a/#2"


def test_a_process_run_as_an_acp_child_names_its_top_level_routes_under_its_stand_ins() -> None:
    assert top_level_route(2) == "s2" and top_level_route(1, "s1/call_a") == "s1/call_a/s1"
    assert [process_base(route) for route in ("s1", "s2/call_a", "s1/call_a/#2", "s10/call_s")] == ["", "", "", ""]
    assert process_base("s1/call_a/s1") == "s1/call_a"
    assert process_base("s1/call_a/s1/call_b/s3/call_c#2") == "s1/call_a/s1/call_b"


def test_blank_arguments_mean_an_empty_object() -> None:
    assert parse_arguments("") == {} and parse_arguments("  \n") == {}
    assert arguments_text(" ") == "{}" and arguments_text('{"a": 1}') == '{"a": 1}'
    assert parse_arguments('{"a": 1}') == {"a": 1}


def nest(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_arguments_too_large_or_too_deep_are_refused_without_being_parsed_whole() -> None:
    assert parse_arguments(f'{{"a": {nest(63)}}}') == {"a": eval(nest(63))}  # 64 levels with the object
    for deep in (f'{{"a": {nest(64)}}}', nest(300), nest(100_000)):
        with pytest.raises(ArgumentsRefused, match="^nested deeper than 64 levels$"):
            parse_arguments(deep)
    with pytest.raises(
        ArgumentsRefused, match=f"^{MAX_ARGUMENTS_CHARS + 1} characters, more than the {MAX_ARGUMENTS_CHARS}"
    ):
        parse_arguments(" " * (MAX_ARGUMENTS_CHARS + 1))
    with pytest.raises(ValueError, match="Expecting"):
        parse_arguments("{")
