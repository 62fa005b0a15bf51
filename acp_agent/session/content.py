"""The content vocabulary of the log: user/tool content blocks, assistant blocks, usage, stream chunks.

It lives here rather than in `llm/` because every streamed chunk is logged and `session/` imports
nothing of the project but the kernel. Model-stream code imports the chunk models from here (there
is no second path to them).
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from acp_agent.kernel.models import Model

# --- user and tool-result content -------------------------------------------------------------


class TextContent(Model):
    """Plain text given by the user or returned by a tool."""

    # Unknown fields (ACP annotations and the like) must survive a load/save round trip.
    model_config = ConfigDict(extra="allow")

    type: Literal["text"] = "text"
    text: str


class ResourceLink(Model):
    """A reference to a resource (a file, a URL) that the client attached."""

    model_config = ConfigDict(extra="allow")

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str


class TextResourceContents(Model):
    """An embedded resource's text: a file the user attached, as the editor had it."""

    model_config = ConfigDict(extra="allow")

    uri: str
    text: str
    mime_type: str | None = None


class BlobResourceContents(Model):
    """An embedded resource's bytes, base64-encoded."""

    model_config = ConfigDict(extra="allow")

    uri: str
    blob: str
    mime_type: str | None = None

    @property
    def size(self) -> int:
        """The number of bytes the base64 text encodes."""
        return decoded_size(self.blob)


class EmbeddedResource(Model):
    """A resource the client embedded in the prompt (`embeddedContext`): its contents, not a link."""

    model_config = ConfigDict(extra="allow")

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents


class ImageContent(Model):
    """An image the user attached (`image` prompt capability), base64-encoded."""

    model_config = ConfigDict(extra="allow")

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    uri: str | None = None

    @property
    def size(self) -> int:
        """The number of bytes the base64 text encodes."""
        return decoded_size(self.data)


def decoded_size(base64: str) -> int:
    """How many bytes a base64 text encodes (its padding aside)."""
    return len(base64) * 3 // 4 - base64[-2:].count("=")


ContentBlock = Annotated[TextContent | ResourceLink | EmbeddedResource | ImageContent, Field(discriminator="type")]

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types a prompt may attach: those the model providers take."""


def block_problem(block: ContentBlock) -> str | None:
    """What makes a prompt's block unfit to be kept in the conversation and sent with every later
    request (a provider that refuses it would fail the thread for good); None when it is fit. An
    image must be of an `IMAGE_TYPES` type with base64 data, an embedded file's bytes base64."""
    if isinstance(block, ImageContent):
        if block.mime_type.lower() not in IMAGE_TYPES:
            return f"mimeType {block.mime_type!r} is not an image type this agent sends ({', '.join(IMAGE_TYPES)})"
        return None if _base64(block.data) else "data is not base64 (or is empty)"
    if (
        isinstance(block, EmbeddedResource)
        and isinstance(block.resource, BlobResourceContents)
        and not _base64(block.resource.blob)
    ):
        return "resource.blob is not base64"
    return None


def _base64(data: str) -> bool:
    try:
        return bool(binascii.a2b_base64(data, strict_mode=True))
    except (binascii.Error, ValueError):
        return False


def is_blank(content: Sequence[ContentBlock]) -> bool:
    """Whether a prompt says nothing: no block, or only text blocks of blanks."""
    return all(isinstance(block, TextContent) and not block.text.strip() for block in content)


# --- assistant output -------------------------------------------------------------------------


class TextBlock(Model):
    """Visible text the model wrote."""

    type: Literal["text"] = "text"
    text: str


class ReasoningBlock(Model):
    """The model's reasoning ("thinking") text."""

    type: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallBlock(Model):
    """A tool call the model made; `arguments` is the raw JSON text as streamed."""

    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str
    arguments: str


def arguments_text(arguments: str) -> str:
    """A call's arguments as JSON text: empty (or blank) text means no arguments, `{}`. Some
    endpoints stream "" for a call without arguments; this is the one place that says so."""
    return arguments if arguments.strip() else "{}"


MAX_ARGUMENTS_CHARS = 4 * 1024 * 1024
"""The longest arguments text a tool call may pass: far more than a model writes in one answer
(a file of a few MiB written whole still passes)."""
MAX_ARGUMENTS_DEPTH = 64
"""How deep a call's arguments may nest: what every tool takes, well inside what the editor's
frames (the card's `rawInput`) and the serializers carry."""


class ArgumentsRefused(ValueError):
    """A call's arguments are JSON too large or too deep to be taken; the message says which."""


def parse_arguments(arguments: str) -> Any:
    """A call's arguments as JSON (blank text is `{}`); `ValueError` when they are not JSON, and
    `ArgumentsRefused` when they are longer than `MAX_ARGUMENTS_CHARS` or nested deeper than
    `MAX_ARGUMENTS_DEPTH` (so what is refused is never parsed whole, nor walked recursively)."""
    if len(arguments) > MAX_ARGUMENTS_CHARS:
        raise ArgumentsRefused(f"{len(arguments)} characters, more than the {MAX_ARGUMENTS_CHARS} a call may pass")
    try:
        value = json.loads(arguments_text(arguments))
    except RecursionError:
        value = None
    else:
        if _depth_within(value, MAX_ARGUMENTS_DEPTH):
            return value
    raise ArgumentsRefused(f"nested deeper than {MAX_ARGUMENTS_DEPTH} levels")


def _depth_within(value: Any, limit: int) -> bool:
    """Whether `value`'s lists and objects nest at most `limit` deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        items = node.values() if isinstance(node, dict) else node
        stack.extend((item, depth + 1) for item in items if isinstance(item, (dict, list)))
    return True


AssistantBlock = Annotated[TextBlock | ReasoningBlock | ToolCallBlock, Field(discriminator="type")]


class Usage(Model):
    """Token counts the provider reported for one model call."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    reasoning_tokens: int | None = None

    @property
    def context(self) -> int:
        """The tokens the call's context held: its input (cached or not) and its output."""
        return self.input_tokens + (self.cache_read_tokens or 0) + self.output_tokens


# --- stream chunks ----------------------------------------------------------------------------


class BlockStart(Model):
    """A new output block begins at `index`."""

    type: Literal["block-start"] = "block-start"
    index: int
    block_type: Literal["text", "reasoning", "tool-call"]


class TextDelta(Model):
    """More visible text for the block at `index`."""

    type: Literal["text-delta"] = "text-delta"
    index: int
    text: str


class ReasoningDelta(Model):
    """More reasoning text for the block at `index`."""

    type: Literal["reasoning-delta"] = "reasoning-delta"
    index: int
    text: str


class ToolCallDelta(Model):
    """More argument text for the tool call at `index`."""

    type: Literal["tool-call-delta"] = "tool-call-delta"
    index: int
    id: str
    name: str | None = None
    arguments_delta: str


class BlockEnd(Model):
    """The block at `index` is complete; `block` is its final form."""

    type: Literal["block-end"] = "block-end"
    index: int
    block: AssistantBlock


class UsageChunk(Model):
    """The call's token usage; it precedes `finish`."""

    type: Literal["usage"] = "usage"
    usage: Usage


class FinishReason(Model):
    """Why the model stopped; `message` and `code` describe an error."""

    kind: Literal["stop", "tool-calls", "max-tokens", "aborted", "error"]
    message: str | None = None
    code: str | None = None


class Finish(Model):
    """The last chunk of a model call."""

    type: Literal["finish"] = "finish"
    reason: FinishReason


StreamChunk = Annotated[
    BlockStart | TextDelta | ReasoningDelta | ToolCallDelta | BlockEnd | UsageChunk | Finish,
    Field(discriminator="type"),
]

# Built on first use, as the models are (`Model`'s `defer_build`): not at import, at start-up.
_DEFERRED = ConfigDict(defer_build=True)
CONTENT_BLOCK_ADAPTER: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock, config=_DEFERRED)
ASSISTANT_BLOCK_ADAPTER: TypeAdapter[AssistantBlock] = TypeAdapter(AssistantBlock, config=_DEFERRED)
STREAM_CHUNK_ADAPTER: TypeAdapter[StreamChunk] = TypeAdapter(StreamChunk, config=_DEFERRED)


def parse_chunk(obj: Any) -> StreamChunk:
    """Validate a JSON-shaped chunk (camelCase or snake_case keys) into its model."""
    return STREAM_CHUNK_ADAPTER.validate_python(obj)
