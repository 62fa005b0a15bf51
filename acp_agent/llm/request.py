"""What an agent asks a model for: the conversation (derived from the log) and the tools."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import Field

from acp_agent.kernel.models import Model
from acp_agent.llm.retry import RetryData
from acp_agent.session.content import AssistantBlock, ContentBlock
from acp_agent.session.events import (
    COMMAND_SOURCE,
    AssistantMessageEvent,
    SessionEvent,
    ToolResultEvent,
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


UNSEEN_SOURCES = frozenset({COMMAND_SOURCE})
"""`user/message` sources the model never sees: a slash command the agent answered itself."""


def derive_messages(events: Iterable[SessionEvent]) -> list[Message]:
    """The conversation a model sees, derived from the log alone ("model-visible means logged")."""
    return [message for event in events if (message := message_of(event)) is not None]


def message_of(event: SessionEvent) -> Message | None:
    """The message one event adds to the conversation, if any."""
    match event:
        case UserMessageEvent() if event.data.source.kind not in UNSEEN_SOURCES:
            return UserMessage(content=event.data.content)
        case AssistantMessageEvent() if event.data.content:
            return AssistantMessage(content=event.data.content)
        case ToolResultEvent():
            data = event.data
            return ToolMessage(call_id=data.call_id, content=data.content, is_error=data.is_error)
    return None
