from __future__ import annotations

import hashlib

from acp_agent.mcp.names import MAX_LENGTH, assign, tool_name


def test_parts_keep_safe_characters_and_replace_the_others() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my server.io", "fetch/page v2") == "mcp__my_server_io__fetch_page_v2"
    assert tool_name("a-b", "üni") == "mcp__a-b___ni"


def test_a_long_name_keeps_the_tool_prefix_and_a_hash_of_the_original() -> None:
    tool = "t" * 80
    digest = hashlib.sha256(f"docs\0{tool}".encode()).hexdigest()[:8]
    name = tool_name("docs", tool)
    assert len(name) == MAX_LENGTH
    assert name == "mcp__docs__" + "t" * (MAX_LENGTH - len("mcp__docs__") - 9) + "_" + digest
    assert tool_name("docs", tool + "x") != name  # same beginning, other tool


def test_a_server_name_too_long_for_any_tool_part_is_cut_too() -> None:
    name = tool_name("s" * 80, "read")
    assert len(name) == MAX_LENGTH and name.startswith("mcp__sss") and name[-9] == "_"


def test_collisions_get_numbers_in_order() -> None:
    assert assign([("a", "x.y"), ("a", "x_y"), ("a", "x y"), ("b", "z")]) == [
        "mcp__a__x_y",
        "mcp__a__x_y_2",
        "mcp__a__x_y_3",
        "mcp__b__z",
    ]
    long = [("s", "t" * 80), ("s", "t" * 80)]
    first, second = assign(long)
    assert second == first[: MAX_LENGTH - 2] + "_2" and len(second) == MAX_LENGTH
