"""The conversation of one session as the model sees it, kept up to date as its log grows."""

from __future__ import annotations

from acp_agent.kernel.scope import Disposer
from acp_agent.llm.request import Message, derive_messages, message_of
from acp_agent.session.events import AssistantMessageEvent, CompactionEvent, SessionEvent, StepEndEvent, StepStartEvent
from acp_agent.session.log import Session


class Conversation:
    """`derive_messages` of a session's log, extended event by event as the log grows instead of
    derived anew for every model call (a cost that grew with the thread).

    The log stays the only source: `messages()` is always what `derive_messages(session.events)`
    gives (a property test holds them equal after random appends). `follow()` derives it from the
    log as it is (a loaded or seeded session's whole history) and then extends it with every
    event appended; an event after which the log derives differently than by extension (a
    compaction, which replaces what came before it) is where it is derived again.
    """

    def __init__(self, session: Session) -> None:
        self._session = session
        self._messages: list[Message] = []
        self._compacting = False
        """Inside a compaction's step: its answer is the summary, not a message."""

    def follow(self) -> Disposer:
        """Derive the conversation from the log now, then extend it with every event appended,
        until the disposer runs."""
        self._messages = derive_messages(self._session.events)
        return self._session.subscribe(self.add)

    def add(self, event: SessionEvent) -> None:
        """Extend the conversation with what `event`, just appended to the log, adds to it (a
        `compaction` replaces what came before it: the conversation is derived again)."""
        match event:
            case StepStartEvent():
                self._compacting = event.data.purpose == "compaction"
            case StepEndEvent():
                self._compacting = False
            case CompactionEvent():
                self._messages = derive_messages(self._session.events)
            case AssistantMessageEvent() if self._compacting:
                pass
            case _:
                message = message_of(event)
                if message is not None:
                    self._messages.append(message)

    def messages(self) -> list[Message]:
        """The conversation so far: a list of its own for the caller (the messages are shared,
        immutable in use)."""
        return list(self._messages)
