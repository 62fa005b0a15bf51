"""The ACP v1 messages this server reads and writes, as pydantic models.

Only what the server uses is modelled; the tests hold these against the official package's models
and the protocol's JSON Schema. Incoming params ignore unknown keys (clients add fields over time);
what goes out is exactly what is modelled.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from acp_agent.kernel.models import Model

PROTOCOL_VERSION = 1


class Incoming(Model):
    """Params sent by the client: lenient about fields this server does not know, strict about the
    types of those it does (`"1"` is not a protocol version, `1` is not a boolean)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


# -- initialize / authenticate ---------------------------------------------------------------


class FileSystemCapabilities(Incoming):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilities(Incoming):
    fs: FileSystemCapabilities = FileSystemCapabilities()
    terminal: bool = False


class InitializeParams(Incoming):
    protocol_version: int
    client_capabilities: ClientCapabilities = ClientCapabilities()


class PromptCapabilities(Model):
    image: bool = False
    audio: bool = False
    embedded_context: bool = False


class AgentCapabilities(Model):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = PromptCapabilities()


class Implementation(Model):
    name: str
    title: str | None = None
    version: str


class InitializeResult(Model):
    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: Implementation
    auth_methods: list[dict[str, Any]] = []


class AuthenticateParams(Incoming):
    method_id: str


# -- sessions --------------------------------------------------------------------------------


class NewSessionParams(Incoming):
    cwd: str
    mcp_servers: list[dict[str, Any]]
    additional_directories: list[str] | None = None


class NewSessionResult(Model):
    session_id: str


class PromptParams(Incoming):
    session_id: str
    prompt: list[dict[str, Any]]


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptResult(Model):
    stop_reason: StopReason


class CancelParams(Incoming):
    session_id: str


# -- session/update --------------------------------------------------------------------------


class Text(Model):
    type: Literal["text"] = "text"
    text: str


class ContentChunk(Model):
    session_update: Literal["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]
    content: Text


class ToolCallContent(Model):
    """Tool call content of type `content`: a content block shown in the tool call card."""

    type: Literal["content"] = "content"
    content: Text


class ToolCallLocation(Model):
    path: str
    line: int | None = None


ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class ToolCallStart(Model):
    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    kind: ToolKind
    status: ToolCallStatus
    raw_input: Any = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolCallProgress(Model):
    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolCallStatus | None = None
    content: list[ToolCallContent] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


SessionUpdate = Annotated[ContentChunk | ToolCallStart | ToolCallProgress, Field(discriminator="session_update")]


class SessionNotification(Model):
    session_id: str
    update: SessionUpdate
