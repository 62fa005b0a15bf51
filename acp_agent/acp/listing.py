"""`session/list`: which stored sessions are listed, in what order, a page at a time."""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterable
from datetime import datetime, timezone

from acp_agent.acp import errors
from acp_agent.acp.schema import ListSessionsResult, SessionInfo
from acp_agent.acp.titles import session_title
from acp_agent.session.persistence import SessionSummary


def list_page(summaries: Iterable[SessionSummary], cwd: str | None, cursor: str | None, size: int) -> ListSessionsResult:
    """The page after `cursor` of the listed sessions (of `cwd` when given), newest first."""
    wanted = None
    if cwd is not None:
        if not os.path.isabs(cwd):
            raise errors.invalid_params(f"cwd must be an absolute path, got {cwd!r}")
        wanted = os.path.normpath(cwd)
    listed = sorted((summary for summary in summaries if _listed(summary, wanted)), key=_list_order)
    if cursor is not None:
        after = _cursor_position(cursor)
        listed = [summary for summary in listed if _list_order(summary) > after]
    page = listed[:size]
    return ListSessionsResult(
        sessions=[_session_info(summary) for summary in page],
        next_cursor=_cursor(page[-1]) if len(listed) > len(page) else None,
    )


def _listed(summary: SessionSummary, cwd: str | None) -> bool:
    """Whether `session/list` shows a session: a top-level one (never a child) with a cwd (`cwd`,
    when given, normalized) that someone prompted."""
    header = summary.header
    return (
        header.parent_session is None
        and header.cwd is not None
        and summary.first_message is not None
        and (cwd is None or os.path.normpath(header.cwd) == cwd)
    )


def _list_order(summary: SessionSummary) -> tuple[int, str]:
    return -summary.updated_at, summary.header.id


def _cursor(summary: SessionSummary) -> str:
    """An opaque cursor: the position of the page's last session in the listing order."""
    raw = json.dumps([summary.updated_at, summary.header.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _cursor_position(cursor: str) -> tuple[int, str]:
    try:
        updated_at, session_id = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if type(updated_at) is int and isinstance(session_id, str):
            return -updated_at, session_id
    except (binascii.Error, ValueError, TypeError):
        pass
    raise errors.invalid_params(f"cursor {cursor!r} is not a cursor this agent gave")


def _session_info(summary: SessionSummary) -> SessionInfo:
    header = summary.header
    assert header.cwd is not None and summary.first_message is not None  # `_listed` holds
    return SessionInfo(
        session_id=header.id,
        cwd=header.cwd,
        title=session_title(summary.first_message),
        updated_at=_iso(summary.updated_at),
    )


def _iso(epoch_ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC, exactly (no float on the way)."""
    seconds, millis = divmod(epoch_ms, 1000)
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc).replace(microsecond=millis * 1000)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
