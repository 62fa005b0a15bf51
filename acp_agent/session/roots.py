"""A session's additional roots as its log records them: the `session/roots` event (what the
tools package gives an agent, `tools/roots.py`) and the set a log holds last, which
`session/list` reports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

ROOTS_EVENT: Final = "session/roots"


class RootsData(Model):
    directories: list[str]
    """The additional directories, resolved, in the client's order (empty: the cwd alone)."""


class RootsEvent(SessionEvent):
    """`session/roots`: the additional directories the session works in from here on (free:
    logged as the session opens); not model-visible (the tools' descriptions name the roots)."""

    type: Literal["session/roots"] = ROOTS_EVENT
    data: RootsData


def logged_directories(events: Sequence[SessionEvent]) -> list[str]:
    """The additional directories a log recorded last (none when it recorded no set)."""
    for event in reversed(events):
        if isinstance(event, RootsEvent):
            return event.data.directories
    return []
