"""The `llm/retry` event: a failed attempt of a model call that an adapter will try again.

The model service registers the type once (however many adapter rows a composition has); the
agent loop logs each retry through the request's `on_retry` callback, in the caller's session.
"""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

RETRY_EVENT: Final = "llm/retry"


class RetryData(Model):
    """A failed attempt of a model call that will be tried again after `delayMs`."""

    provider: str
    attempt: int
    """The attempt that failed, from 1."""
    attempts: int
    """The most attempts the retry policy allows."""
    delay_ms: int
    code: str
    status: int | None = None
    message: str


class RetryEvent(SessionEvent):
    type: Literal["llm/retry"] = RETRY_EVENT
    data: RetryData
