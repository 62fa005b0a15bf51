"""What an agent asks a model for: the conversation (derived from the log) and the tools."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import Field, ValidatorFunctionWrapHandler, field_validator

from acp_agent.kernel._compact import compacted
from acp_agent.kernel.models import Model
from acp_agent.llm.retry import RetryData
from acp_agent.llm.texts import framed_summary
from acp_agent.session.content import AssistantBlock, ContentBlock, TextContent
from acp_agent.session.events import (
    COMMAND_SOURCE,
    AssistantChunkEvent,
    AssistantMessageEvent,
    CompactionEvent,
    SessionEvent,
    StepEndEvent,
    StepStartEvent,
    ToolResultEvent,
    TurnStartEvent,
    UserMessageEvent,
)


class UserMessage(Model):
    role: Literal["user"] = "user"
    content: list[ContentBlock]


class AssistantMessage(Model):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantBlock]


class ToolMessage(Model):
    role: Literal["tool"] = "tool"
    call_id: str
    content: list[ContentBlock]
    is_error: bool = False


Message = Annotated[UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]


class Messages(list[Message]):
    """Message models as a `Derivation` built them from validated events (`derive_messages`, the
    conversation's `messages()`): a request takes them without looking at each, so that a model
    call costs the same at turn 200 as at turn 1. Only models belong in it."""


class ToolSchema(Model):
    """A tool as the model sees it: name, description and JSON Schema of the arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


class LlmRequest(Model):
    """One model call. `route` and `session_id` say which agent asks (the replay model keys on route)."""

    provider: str
    model: str
    system: str
    messages: list[Message]
    tools: list[ToolSchema] = []
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    """The thought level the user chose (None: the adapter's own setting)."""
    vision: bool = False
    """Whether the model takes images; without, an adapter describes them in text."""
    route: str
    session_id: str
    on_retry: Callable[[RetryData], object] | None = Field(default=None, exclude=True, repr=False)
    """Called with each failed attempt an adapter will try again (the caller logs it); not part of
    the request's data."""

    @field_validator("messages", mode="wrap")
    @classmethod
    def _taken_as_built(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """`Messages` are taken as they are, without a look at each: validating the thread's
        messages again, or only checking that each is a model, would cost each call more as the
        thread grows. Anything else (a dumped request read back, a list built by hand) is
        validated; a message model in it is kept, not copied."""
        if type(value) is Messages:
            return value
        return handler(value)


UNSEEN_SOURCES = frozenset({COMMAND_SOURCE})
"""`user/message` sources the model never sees: a slash command the agent answered itself."""


def derive_messages(events: Iterable[SessionEvent]) -> Messages:
    """The conversation a model sees, derived from the log alone ("model-visible means logged"):
    one pass of a `Derivation`, in order."""
    derivation = Derivation()
    for event in events:
        derivation.add(event)
    return Messages(derivation.messages)


class Derivation:
    """`derive_messages`, one event at a time (the live conversation extends one as its log grows).

    A `compaction` restarts it: its summary (framed, as a user message), the user messages it kept
    (those from its `cutSeq` up to its own turn), its own turn's messages up to it, then every
    message after it. The steps of a compaction (`step/start` with `purpose: "compaction"`) are
    never part of it.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._users: list[tuple[int, UserMessage]] = []
        """Every user message so far, with its seq: what a compaction may keep."""
        self._turn_start, self._turn_seq = 0, 0
        """Where the current turn's messages begin, and the seq of its `turn/start`."""
        self._compacting = False

    def add(self, event: SessionEvent) -> None:
        match event:
            case AssistantChunkEvent():  # most of a log, never a message of its own: first
                pass
            case TurnStartEvent():
                self._turn_start, self._turn_seq = len(self.messages), event.seq
            case StepStartEvent():
                self._compacting = event.data.purpose == "compaction"
            case StepEndEvent():
                self._compacting = False
            case CompactionEvent():
                cut = event.data.cut_seq
                summary = UserMessage(content=[TextContent(text=framed_summary(event.data.summary))])
                head = [summary, *(message for seq, message in self._users if cut <= seq < self._turn_seq)]
                self.messages, self._turn_start = [*head, *self.messages[self._turn_start :]], len(head)
            case AssistantMessageEvent() if self._compacting:
                pass
            case _:
                message = message_of(event)
                if message is not None:
                    self.messages.append(message)
                    if isinstance(message, UserMessage):
                        self._users.append((event.seq, message))


def message_of(event: SessionEvent) -> Message | None:
    """The message one event adds to the conversation, if any (outside a compaction step; a
    `compaction` itself replaces what came before it: `Derivation`). Made without validating the
    event's fields again (they were when it was logged), sharing its lists of blocks, and
    compacted: a session keeps its conversation for its whole life."""
    match event:
        case UserMessageEvent() if event.data.source.kind not in UNSEEN_SOURCES:
            return compacted(UserMessage.model_construct(content=event.data.content))
        case AssistantMessageEvent() if event.data.content:
            return compacted(AssistantMessage.model_construct(content=event.data.content))
        case ToolResultEvent():
            data = event.data
            return compacted(
                ToolMessage.model_construct(call_id=data.call_id, content=data.content, is_error=data.is_error)
            )
        case _ if (seen := getattr(event, "model_content", None)) is not None:
            # A plugin's event the model reads as a user message (a background child's notice).
            return compacted(UserMessage.model_construct(content=seen()))
    return None
