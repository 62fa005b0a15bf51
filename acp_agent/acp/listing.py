"""`session/list`: which stored sessions are listed, in what order, a page at a time."""

from __future__ import annotations

import base64
import binascii
import heapq
import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime

from acp_agent.acp import errors
from acp_agent.acp.schema import ListSessionsResult, SessionInfo
from acp_agent.session.index import SessionSummary, parse_json


def listed_cwd(cwd: str | None) -> str | None:
    """The working directory a listing keeps, normalized (None: all of them); a relative one is refused."""
    if cwd is None:
        return None
    if not os.path.isabs(cwd):
        raise errors.invalid_params(f"cwd must be an absolute path, got {cwd!r}")
    return os.path.normpath(cwd)


def list_page(summaries: Iterable[SessionSummary], cursor: str | None, size: int) -> ListSessionsResult:
    """The page after `cursor` of the listed sessions among `summaries` (the store's top-level
    sessions, of one cwd when asked), newest first."""
    listed = (summary for summary in summaries if _listed(summary))
    if cursor is not None:
        after = _cursor_position(cursor)
        listed = (summary for summary in listed if _list_order(summary) > after)
    # The page and one more (whether there is a next page), not the whole store sorted.
    page = heapq.nsmallest(size + 1, listed, key=_list_order)
    more = len(page) > size
    del page[size:]
    return ListSessionsResult(
        sessions=[_session_info(summary) for summary in page],
        next_cursor=_cursor(page[-1]) if more else None,
    )


def _listed(summary: SessionSummary) -> bool:
    """Whether `session/list` shows a session: a top-level one (never a child) with a cwd that
    someone prompted."""
    return summary.parent_session is None and summary.cwd is not None and summary.prompted


def _list_order(summary: SessionSummary) -> tuple[int, str]:
    return -summary.updated_at, summary.id


def _cursor(summary: SessionSummary) -> str:
    """An opaque cursor: the position of the page's last session in the listing order."""
    raw = json.dumps([summary.updated_at, summary.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _cursor_position(cursor: str) -> tuple[int, str]:
    try:
        updated_at, session_id = parse_json(base64.urlsafe_b64decode(cursor.encode()))
        if type(updated_at) is int and isinstance(session_id, str):
            return -updated_at, session_id
    except (binascii.Error, ValueError, TypeError):
        pass
    raise errors.invalid_params(f"cursor {cursor!r} is not a cursor this agent gave")


def _session_info(summary: SessionSummary) -> SessionInfo:
    assert summary.cwd is not None  # `_listed` holds
    return SessionInfo(
        session_id=summary.id,
        cwd=summary.cwd,
        additional_directories=summary.additional_directories or None,  # omitted when empty
        title=summary.title,
        updated_at=_iso(summary.updated_at),
    )


def _iso(epoch_ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC, exactly (no float on the way)."""
    seconds, millis = divmod(epoch_ms, 1000)
    moment = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=millis * 1000)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
