"""`list_page`: the page and whether another follows, at the page size's edges."""

from __future__ import annotations

import base64

import pytest

from acp_agent.acp.jsonrpc import JsonRpcError
from acp_agent.acp.listing import list_page
from acp_agent.session.index import SessionSummary


def summary(n: int, *, prompted: bool = True, parent: str | None = None) -> SessionSummary:
    return SessionSummary(f"s{n:02d}", "/work", parent, 0, 1_000 * n, f"task {n}", prompted)


@pytest.mark.parametrize(("stored", "pages"), [(0, [0]), (3, [3]), (4, [3, 1]), (6, [3, 3]), (7, [3, 3, 1])])
def test_pages_hold_the_size_and_a_cursor_only_when_more_follow(stored: int, pages: list[int]) -> None:
    summaries = [summary(n) for n in range(stored)]
    seen: list[str] = []
    sizes: list[int] = []
    cursor = None
    while True:
        page = list_page(summaries, cursor, 3)
        sizes.append(len(page.sessions))
        seen.extend(info.session_id for info in page.sessions)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sizes == pages
    assert seen == [f"s{n:02d}" for n in reversed(range(stored))]  # newest first, each once


def test_children_and_unprompted_sessions_are_not_listed_nor_counted_for_the_next_page() -> None:
    summaries = [summary(1), summary(2), summary(3, prompted=False), summary(4, parent="s1")]
    page = list_page(summaries, None, 2)
    assert [info.session_id for info in page.sessions] == ["s02", "s01"]
    assert page.next_cursor is None


@pytest.mark.parametrize("raw", [b"not json", b"[1]", b"[" * 100_000 + b"]" * 100_000, b'["x", "s01"]'])
def test_a_cursor_this_agent_did_not_give_is_invalid_params_whatever_it_holds(raw: bytes) -> None:
    cursor = base64.urlsafe_b64encode(raw).decode()
    with pytest.raises(JsonRpcError) as caught:
        list_page([summary(1)], cursor, 3)
    assert caught.value.code == -32602 and "is not a cursor this agent gave" in caught.value.message
