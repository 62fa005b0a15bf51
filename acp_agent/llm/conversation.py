"""The conversation of one session as the model sees it, kept up to date as its log grows."""

from __future__ import annotations

from acp_agent.kernel.scope import Disposer
from acp_agent.llm.request import Derivation, Messages
from acp_agent.session.events import SessionEvent
from acp_agent.session.log import Session


class Conversation:
    """`derive_messages` of a session's log, extended event by event as the log grows instead of
    derived anew for every model call (a cost that grew with the thread).

    The log stays the only source: `messages()` is always what `derive_messages(session.events)`
    gives (a property test holds them equal after random appends), since both are one
    `Derivation`: `follow()` feeds it the log as it is (a loaded or seeded session's whole
    history), then every event appended.
    """

    def __init__(self, session: Session) -> None:
        self._session = session
        self._derivation = Derivation()

    def follow(self) -> Disposer:
        """Derive the conversation from the log now, then extend it with every event appended,
        until the disposer runs."""
        self._derivation = Derivation()
        for event in self._session.events:
            self._derivation.add(event)
        return self._session.subscribe(self.add, chunks=False)

    def add(self, event: SessionEvent) -> None:
        """Extend the conversation with what `event`, just appended to the log, adds to it."""
        self._derivation.add(event)

    def messages(self) -> Messages:
        """The conversation so far: a list of its own for the caller (the messages are shared,
        immutable in use), which a request takes as it is."""
        return Messages(self._derivation.messages)
