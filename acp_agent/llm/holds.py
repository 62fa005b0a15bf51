"""Where a test model may hold an agent's work so that a run's order is its fixtures' order.

`NOTICES_DUE` is awaited (`serial`) with an agent and a `NoticeCount` right before the notices
pending for the agent (what background children sent it) are logged for a model call, when
anyone listens: the replay model holds the call until as many notices as its fixtures show
before it have come (`llm/replay.py`, `Gate`).

`AGENT_KNOWN` is emitted (synchronous listeners) with a route and a session id by an agent that
never asks the model (the stand-in of an ACP agent run as a child process): the replay model
learns the id it streams for that route's name (a background child the parent model messages)
from it, as it learns the others' from their calls."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, Protocol

from acp_agent.kernel.events import EventKey


class Routed(Protocol):
    """An agent, as a hold sees it: by its route."""

    @property
    def route(self) -> str: ...


class NoticeCount(Protocol):
    """The notices that came to one agent."""

    received: int

    async def until(self, count: int) -> None:
        """Return once `count` notices have come in all."""


NOTICES_DUE: Final = EventKey[Callable[[Routed, NoticeCount], Awaitable[object]]]("llm/notices-due")
AGENT_KNOWN: Final = EventKey[Callable[[str, str], object]]("llm/agent-known")
