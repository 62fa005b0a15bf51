"""Session log events: the envelope `{type, seq, time, data, ignorable?}` and the core event types."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple, Protocol, TypeVar

from pydantic import ConfigDict, Field, field_validator

from acp_agent.kernel._compact import assembled, shared_fields
from acp_agent.kernel.models import Model
from acp_agent.session.content import AssistantBlock, ContentBlock, StreamChunk, Usage
from acp_agent.session.errors import UnsupportedVersion

SUPPORTED_VERSION = 0


class SessionHeader(Model):
    """Line 0 of a persisted log: who the session is and where it came from."""

    # Newer writers may add header fields; keep them rather than refuse the log.
    model_config = ConfigDict(extra="allow")

    type: Literal["session"] = "session"
    version: int = SUPPORTED_VERSION
    id: str
    created_at: int
    cwd: str | None = None
    parent_session: str | None = None
    seed_length: int | None = None
    delegation_depth: int | None = None
    spawn_call_id: str | None = None
    route: str | None = None
    forked_from: str | None = None
    """The session this one was forked from (`session/fork`): its history begins as theirs."""

    @field_validator("version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if version != SUPPORTED_VERSION:
            # Not a ValueError, so pydantic lets it through instead of wrapping it.
            raise UnsupportedVersion(version)
        return version


class SessionEvent(Model):
    """The envelope every event shares; subclasses narrow `type` to a literal and type `data`."""

    type: str
    seq: int
    time: int
    data: Any
    ignorable: bool | None = None


D = TypeVar("D")


class EventOf(Protocol[D]):
    """An event class whose `data` is a `D`, as `Session.append(TurnEndEvent, TurnEndData(...))`
    takes it: the class names the event's type, and the type checker holds the data to it."""

    data: D


class OpaqueEvent(SessionEvent):
    """An ignorable event of a type nobody registered, kept verbatim so it survives a rewrite."""

    model_config = ConfigDict(extra="allow")


# --- data models ------------------------------------------------------------------------------


class Trigger(Model):
    """What started a turn."""

    kind: Literal["message", "continuation", "injection"]
    source: dict[str, Any] | None = None


class TurnStartData(Model):
    turn: int
    trigger: Trigger


class Source(Model):
    """Who sent a user message (`user`, `plugin`, ...)."""

    model_config = ConfigDict(extra="allow")

    kind: str


STEER_SOURCE = "steer"
"""The source of a steering message: the user's words for the running turn, or a turn of their own
when none runs (`Agent.steer`)."""
USER_SOURCES = ("user", STEER_SOURCE)
"""`user/message` sources that are the user's own words, which name a session (others, such as a
plugin's injection or a slash command the agent answered itself, do not)."""
COMMAND_SOURCE = "command"
"""The source of a slash command the agent answered itself, without the model (`/compact`): shown
to the user again when the session is loaded, never seen by the model, never a title."""


class UserMessageData(Model):
    content: list[ContentBlock]
    source: Source


class StepData(Model):
    turn: int
    step: int
    purpose: Literal["compaction"] | None = None
    """Set on the `step/start` of a step that is not part of the conversation: a `compaction` step
    holds the call that summarizes the history; message derivation skips it and it does not count
    towards a turn's step cap."""


class AssistantChunkData(Model):
    turn: int
    step: int
    chunk: StreamChunk


class CallCost(Model):
    """What one model call cost, when its model declares prices (`llm.pricing`)."""

    amount: float
    currency: str


class AssistantMessageData(Model):
    turn: int
    step: int
    content: list[AssistantBlock]
    usage: Usage | None = None
    cost: CallCost | None = None
    interrupted: bool | None = None


class ToolCallData(Model):
    turn: int
    step: int
    call_id: str
    name: str
    arguments: str


class ToolError(Model):
    """Why a tool call failed, machine-readable."""

    code: str
    message: str


class ToolResultData(Model):
    turn: int
    step: int
    call_id: str
    content: list[ContentBlock]
    is_error: bool
    error: ToolError | None = None
    raw_output: Any = None
    """The tool's raw output, for the editor's card (not model-visible)."""


CompactionTrigger = Literal["threshold", "overflow", "command"]
"""Why a compaction ran: the estimated context passed the threshold before a model call, the
provider answered that the context overflowed, or the user typed `/compact`."""


class CompactionData(Model):
    """The history was summarized: the model's messages from here on start with `summary`.

    `cutSeq` is the seq from which user messages before the compaction's turn are kept verbatim
    (the compaction's own seq when none is). `tokens` is the estimated size of the history the
    model sees right after it (the editor's context meter; the next estimate starts from it)."""

    turn: int
    summary: str
    cut_seq: int
    tokens: int
    trigger: CompactionTrigger


class TurnCompleted(Model):
    kind: Literal["completed"] = "completed"


class TurnAborted(Model):
    kind: Literal["aborted"] = "aborted"
    reason: str | None = None


class TurnFailed(Model):
    kind: Literal["error"] = "error"
    step: int | None = None
    message: str
    code: str | None = None


class TurnDisposed(Model):
    kind: Literal["disposed"] = "disposed"


class TurnMaxTokens(Model):
    kind: Literal["max-tokens"] = "max-tokens"


class TurnMaxSteps(Model):
    kind: Literal["max-steps"] = "max-steps"


class TurnInterrupted(Model):
    kind: Literal["interrupted"] = "interrupted"


TurnEndReason = Annotated[
    TurnCompleted | TurnAborted | TurnFailed | TurnDisposed | TurnMaxTokens | TurnMaxSteps | TurnInterrupted,
    Field(discriminator="kind"),
]


class TurnEndData(Model):
    turn: int
    reason: TurnEndReason


# --- core events ------------------------------------------------------------------------------


class TurnStartEvent(SessionEvent):
    type: Literal["turn/start"] = "turn/start"
    data: TurnStartData


class UserMessageEvent(SessionEvent):
    type: Literal["user/message"] = "user/message"
    data: UserMessageData


class StepStartEvent(SessionEvent):
    type: Literal["step/start"] = "step/start"
    data: StepData


class StepEndEvent(SessionEvent):
    type: Literal["step/end"] = "step/end"
    data: StepData


class StreamedChunk(NamedTuple):
    """A streamed chunk's fields, as `Session.append_chunk` logs it (`AssistantChunkEvent.fields`):
    a tuple, made once per streamed chunk (with `tuple.__new__`, without the generated `__new__`)."""

    seq: int
    time: int
    turn: int
    step: int
    chunk: StreamChunk


class AssistantChunkEvent(SessionEvent):
    type: Literal["assistant/chunk"] = "assistant/chunk"
    data: AssistantChunkData

    @property
    def fields(self) -> StreamedChunk:
        """What `streamed` makes this event of."""
        data = self.data
        return StreamedChunk(self.seq, self.time, data.turn, data.step, data.chunk)

    @classmethod
    def streamed(cls, fields: StreamedChunk) -> AssistantChunkEvent:
        """The event validation makes of a streamed chunk's fields, made without it: the most
        numerous event, one per streamed chunk, whose values are typed already (the chunk is a
        model the adapter made, the numbers are the log's). It sets what `model_construct` sets
        (a test holds the two equal), in a little over half the time validating takes."""
        seq, time, turn, step, chunk = fields
        data = assembled(AssistantChunkData, {"turn": turn, "step": step, "chunk": chunk}, _CHUNK_DATA_FIELDS)
        values = {"type": "assistant/chunk", "seq": seq, "time": time, "data": data, "ignorable": None}
        return assembled(cls, values, _CHUNK_EVENT_FIELDS)


# The sets of field names every chunk's event shares with the other compacted models.
_CHUNK_DATA_FIELDS = shared_fields({"turn", "step", "chunk"})
_CHUNK_EVENT_FIELDS = shared_fields({"type", "seq", "time", "data"})


class AssistantMessageEvent(SessionEvent):
    type: Literal["assistant/message"] = "assistant/message"
    data: AssistantMessageData


class ToolCallEvent(SessionEvent):
    type: Literal["tool/call"] = "tool/call"
    data: ToolCallData


class ToolResultEvent(SessionEvent):
    type: Literal["tool/result"] = "tool/result"
    data: ToolResultData


class TurnEndEvent(SessionEvent):
    type: Literal["turn/end"] = "turn/end"
    data: TurnEndData


class CompactionEvent(SessionEvent):
    """`compaction`: message derivation starts from the last one (never `ignorable`: the history
    depends on it). It sits inside a turn, between steps."""

    type: Literal["compaction"] = "compaction"
    data: CompactionData


CORE_EVENTS: tuple[type[SessionEvent], ...] = (
    TurnStartEvent,
    UserMessageEvent,
    StepStartEvent,
    StepEndEvent,
    AssistantChunkEvent,
    AssistantMessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    CompactionEvent,
)
