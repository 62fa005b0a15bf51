"""The OpenAI chat-completions wire, without I/O: the request body made from an `LlmRequest`, SSE
events cut from the response bytes, and stream chunks made from those events.

`openai_compat.py` does the HTTP; everything here is plain data in, plain data out, so it is
tested byte by byte and benchmarked apart from the network.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic_core import from_json

from acp_agent.kernel.models import Model
from acp_agent.llm import codes, texts
from acp_agent.llm.errors import LlmError
from acp_agent.llm.request import AssistantMessage, LlmRequest, Message, ToolMessage
from acp_agent.session.content import (
    BlockEnd,
    BlockStart,
    ContentBlock,
    Finish,
    FinishReason,
    ImageContent,
    ReasoningBlock,
    ReasoningDelta,
    ResourceLink,
    StreamChunk,
    TextBlock,
    TextContent,
    TextDelta,
    TextResourceContents,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    UsageChunk,
    arguments_text,
)

ReasoningHistory = Literal["tool-turns", "all", "none"]
"""Which earlier assistant messages send their reasoning back as `reasoning_content`."""

DONE = b"[DONE]"
EXCERPT = 200

# --- the request --------------------------------------------------------------------------------


class RequestOptions(Model):
    """What the adapter's config adds to a request (None: leave the provider's default). The
    `openai_compat` row's config is these fields (with these defaults) and its own."""

    model: str | None = None
    """Sent only when a request names no model: requests carry the agents row's `model`."""
    max_tokens: int | None = None
    """Sent when the request sets no `max_tokens` (the agents row's `maxTokens`)."""
    temperature: float | None = None
    reasoning_effort: str | None = None
    """`reasoning_effort` (DeepSeek: low/high/max; OpenAI: minimal/low/medium/high); a request's
    chosen thought level wins."""
    thinking: Literal["enabled", "disabled"] | None = None
    """DeepSeek's thinking-mode switch: `thinking: {type: ...}`."""
    reasoning_history: ReasoningHistory = "tool-turns"
    """Which earlier reasoning goes back as `reasoning_content` (see `reasoning_carried`)."""
    extra_body: dict[str, Any] = {}
    """Merged into the body last: provider-specific knobs (`top_p`, `seed`, Ollama's `options`)."""


def chat_request(request: LlmRequest, options: RequestOptions) -> dict[str, Any]:
    """The JSON body of `POST /chat/completions` (streaming, usage included) for `request`."""
    body: dict[str, Any] = {
        "model": request.model or options.model or "",
        "messages": wire_messages(request, options.reasoning_history),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
            }
            for tool in request.tools
        ]
    max_tokens = request.max_tokens if request.max_tokens is not None else options.max_tokens
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    reasoning_effort = request.reasoning_effort or options.reasoning_effort
    if reasoning_effort is not None:
        body["reasoning_effort"] = reasoning_effort
    if options.thinking is not None:
        body["thinking"] = {"type": options.thinking}
    body.update(options.extra_body)
    return body


def encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def wire_messages(request: LlmRequest, reasoning_history: ReasoningHistory = "tool-turns") -> list[dict[str, Any]]:
    """The conversation as chat messages: system, user, assistant (with tool calls), tool results.

    A tool call that has no result in the conversation (a stream cut short while the call was being
    written) is left out, with its message when nothing else is left: providers refuse an assistant
    tool call that no `role: tool` message answers.
    """
    answered = {message.call_id for message in request.messages if isinstance(message, ToolMessage)}
    carried = reasoning_carried(request.messages, reasoning_history)
    wire: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
    shown: list[dict[str, Any]] = []  # the images of the tool results since the last other message
    for position, message in enumerate(request.messages):
        if not isinstance(message, ToolMessage) and shown:
            wire.append({"role": "user", "content": shown})
            shown = []
        if isinstance(message, AssistantMessage):
            assistant = _assistant(message, answered, position in carried)
            if assistant is not None:
                wire.append(assistant)
        elif isinstance(message, ToolMessage):
            wire.append(_tool(message, request.vision, shown))
        else:
            wire.append({"role": "user", "content": user_content(message.content, request.vision)})
    if shown:
        wire.append({"role": "user", "content": shown})
    return wire


def _tool(message: ToolMessage, vision: bool, shown: list[dict[str, Any]]) -> dict[str, Any]:
    """A tool result's message. Its `content` is text only on this wire: for a vision model its
    images go to `shown`, headed by a text part naming the call, and are sent as the parts of a
    user message right after the step's tool messages; other models read them as omitted."""
    images = [block for block in message.content if isinstance(block, ImageContent)] if vision else []
    if images:
        shown.append({"type": "text", "text": texts.tool_images(message.call_id)})
        shown.extend(_image_part(image) for image in images)
    blocks = [block for block in message.content if not isinstance(block, ImageContent)] if images else message.content
    return {"role": "tool", "tool_call_id": message.call_id, "content": content_text(blocks)}


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def user_content(blocks: Sequence[ContentBlock], vision: bool) -> str | list[dict[str, Any]]:
    """A user message's `content`: one string, unless it has images and the model takes them;
    then parts, the text between images joined in one `text` part, each image an `image_url`
    part with a data URL. A model without vision reads `[image omitted: <mimeType>]` instead."""
    if not vision or not any(isinstance(block, ImageContent) for block in blocks):
        return content_text(blocks)
    parts: list[dict[str, Any]] = []
    text: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, ImageContent):
            if text:
                parts.append({"type": "text", "text": content_text(text)})
                text = []
            parts.append(_image_part(block))
        else:
            text.append(block)
    if text:
        parts.append({"type": "text", "text": content_text(text)})
    return parts


def reasoning_carried(messages: Sequence[Message], policy: ReasoningHistory) -> set[int]:
    """Positions of the assistant messages whose reasoning goes back to the provider.

    `tool-turns` follows DeepSeek's thinking-mode rule: between two user messages, if the model
    called a tool, the reasoning of every assistant message there must be sent back (in this and
    every later request; without it DeepSeek answers 400); elsewhere it is not needed (DeepSeek
    ignores it), so it is not sent. `all` sends every reasoning, `none` never does.
    """
    if policy == "none":
        return set()
    carried: set[int] = set()
    segment: list[int] = []
    called = False
    for position, message in enumerate([*messages, None]):
        if isinstance(message, AssistantMessage):
            segment.append(position)
            called = called or any(block.type == "tool-call" for block in message.content)
        elif message is None or message.role == "user":
            if called or policy == "all":
                carried.update(segment)
            segment, called = [], False
    return carried


def _assistant(message: AssistantMessage, answered: set[str], carry_reasoning: bool) -> dict[str, Any] | None:
    texts = [block.text for block in message.content if block.type == "text"]
    calls = [block for block in message.content if block.type == "tool-call" and block.id in answered]
    if not texts and not calls:
        return None
    wire: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    reasoning = [block.text for block in message.content if block.type == "reasoning"]
    if carry_reasoning and reasoning:
        wire["reasoning_content"] = "".join(reasoning)
    if calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call.arguments)},
            }
            for call in calls
        ]
    return wire


def content_text(blocks: Sequence[ContentBlock]) -> str:
    """User or tool content as one string, a block a line (or more): text as it is, a resource
    link naming its uri, an embedded text resource as its contents headed by its uri, a blob
    resource described, an image omitted (`texts.py`)."""
    return "\n".join(block_text(block) for block in blocks)


def block_text(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ResourceLink):
        return texts.resource_link(block.uri, block.name)
    if isinstance(block, ImageContent):
        return texts.image_omitted(block.mime_type)
    resource = block.resource
    if isinstance(resource, TextResourceContents):
        return texts.resource_text(resource.uri, resource.text)
    return texts.resource_blob(resource.uri, resource.mime_type, resource.size)


# --- server-sent events -----------------------------------------------------------------------


class SseDecoder:
    """Cuts a byte stream into the `data` of its server-sent events, however the bytes were split.

    Lines end at LF or CRLF; an event ends at a blank line; its `data` lines are joined with LF;
    comments (`: keep-alive`) and the other fields are ignored. The data stays bytes: a multi-byte
    character split across two reads is whole again once its line is, and the JSON parser decodes
    it. A lone CR as a line end (allowed by the SSE spec, sent by no chat-completions server we
    know) is not supported.
    """

    def __init__(self) -> None:
        self._rest = b""
        self._data: list[bytes] = []

    def feed(self, piece: bytes) -> list[bytes]:
        """The events completed by `piece`."""
        buffer = self._rest + piece if self._rest else piece
        if b"\r" in buffer:
            # A CR at the very end stays in `_rest` (the last, unfinished line) until its LF comes.
            buffer = buffer.replace(b"\r\n", b"\n")
        lines = buffer.split(b"\n")
        self._rest = lines.pop()
        events: list[bytes] = []
        data = self._data
        for line in lines:
            if line:
                if line[:6] == b"data: ":
                    data.append(line[6:])
                elif line[:5] == b"data:":
                    data.append(line[5:])
            elif data:
                events.append(data[0] if len(data) == 1 else b"\n".join(data))
                data = self._data = []
        return events

    def close(self) -> list[bytes]:
        """At the end of the stream: an event left without its blank line still counts (lenient)."""
        events = self.feed(b"\n\n")
        self._rest, self._data = b"", []
        return events


# --- response events -> stream chunks -----------------------------------------------------------


class StreamFailure(Exception):
    """The stream carried an error object (`data: {"error": ...}`) instead of an answer."""

    def __init__(self, error: Any) -> None:
        super().__init__("error event in the stream")
        self.error = error
        self.status = error.get("code") if isinstance(error, dict) and type(error.get("code")) is int else None


class WireUsage(BaseModel):
    """The `usage` object: OpenAI's fields and DeepSeek's cache fields."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_cache_hit_tokens: int | None = None
    prompt_cache_miss_tokens: int | None = None
    prompt_tokens_details: dict[str, Any] | None = None
    completion_tokens_details: dict[str, Any] | None = None

    def usage(self) -> Usage:
        """As the log counts it: `inputTokens` excludes the cached prompt tokens (`cacheReadTokens`),
        as in the recorded DeepSeek sessions; `outputTokens` includes the reasoning tokens."""
        cached = self.prompt_cache_hit_tokens
        if cached is None and self.prompt_tokens_details is not None:
            cached = self.prompt_tokens_details.get("cached_tokens")
        uncached = self.prompt_cache_miss_tokens
        if uncached is None:
            uncached = self.prompt_tokens - (cached or 0)
        details = self.completion_tokens_details or {}
        return Usage(
            input_tokens=uncached,
            output_tokens=self.completion_tokens,
            cache_read_tokens=cached,
            reasoning_tokens=details.get("reasoning_tokens"),
        )


class _Block:
    __slots__ = ("index", "kind", "parts", "id", "name")

    def __init__(
        self, index: int, kind: Literal["text", "reasoning", "tool-call"], id: str = "", name: str = ""
    ) -> None:
        self.index = index
        self.kind = kind
        self.parts: list[str] = []
        self.id = id
        self.name = name

    def end(self) -> BlockEnd:
        text = "".join(self.parts)
        if self.kind == "tool-call":
            return BlockEnd(index=self.index, block=ToolCallBlock(id=self.id, name=self.name, arguments=text))
        return BlockEnd(
            index=self.index, block=ReasoningBlock(text=text) if self.kind == "reasoning" else TextBlock(text=text)
        )


def new_call_id() -> str:
    """An id for a tool call the provider streamed without one."""
    return f"call_{uuid.uuid4().hex[:24]}"


class StreamTranslator:
    """Turns chat-completion chunk events into stream chunks.

    Blocks are numbered in the order they first appear: the reasoning (`delta.reasoning_content`,
    or `delta.reasoning`), the text (`delta.content`) and one block per tool call, keyed by the
    call's wire `index` so parallel calls may interleave. Each block opens with `block-start`,
    grows by deltas (argument fragments are appended as they come) and ends, whole, with
    `block-end` when the choice's `finish_reason` arrives; `usage` and `finish` follow at `[DONE]`.
    """

    def __init__(self) -> None:
        self._reasoning: _Block | None = None
        self._text: _Block | None = None
        self._calls: dict[Any, _Block] = {}
        self._blocks: list[_Block] = []
        self._usage: Usage | None = None
        self._finish: str | None = None
        self.done = False
        """Whether `[DONE]` was read: the call is complete."""

    def feed(self, events: list[bytes]) -> list[StreamChunk]:
        """The chunks for a batch of event payloads; raises `LlmError` (MALFORMED_RESPONSE) for an
        event that cannot be read, `StreamFailure` for an error event."""
        out: list[StreamChunk] = []
        for data in events:
            if self.done:
                break
            try:
                event = from_json(data)
            except ValueError:
                if data != DONE:
                    raise _malformed(data) from None
                self._close(out)
                continue
            try:
                self._event(event, out)
            except (ValueError, TypeError, AttributeError, KeyError, IndexError):  # ValidationError is a ValueError
                raise _malformed(data) from None
        return out

    def _event(self, event: dict[str, Any], out: list[StreamChunk]) -> None:
        # The hot path (once per token): the common keys first, each looked up once.
        choices = event.get("choices")
        if choices and self._finish is None:
            choice = choices[0]
            delta = choice.get("delta")
            if delta:
                text = delta.get("content")
                if text:
                    block = self._text or self._open("text", out)
                    out.append(TextDelta(index=block.index, text=text))
                    block.parts.append(text)
                    if len(delta) == 1:
                        delta = None
                if delta:
                    text = delta.get("reasoning_content") or delta.get("reasoning")
                    if text:
                        block = self._reasoning or self._open("reasoning", out)
                        out.append(ReasoningDelta(index=block.index, text=text))
                        block.parts.append(text)
                    calls = delta.get("tool_calls")
                    if calls:
                        self._tool_calls(calls, out)
            reason = choice.get("finish_reason")
            if reason:
                self._finish = str(reason)
                out.extend(block.end() for block in self._blocks)
        if not choices:
            error = event.get("error")
            if error:
                raise StreamFailure(error)
        usage = event.get("usage")
        if usage:
            self._usage = WireUsage.model_validate(usage).usage()

    def _open(self, kind: Literal["text", "reasoning"], out: list[StreamChunk]) -> _Block:
        block = _Block(len(self._blocks), kind)
        self._blocks.append(block)
        if kind == "text":
            self._text = block
        else:
            self._reasoning = block
        out.append(BlockStart(index=block.index, block_type=kind))
        return block

    def _tool_calls(self, calls: list[Any], out: list[StreamChunk]) -> None:
        for position, call in enumerate(calls):
            key = call.get("index", position)
            function = call.get("function") or {}
            name = function.get("name")
            block = self._calls.get(key)
            if block is None:
                block = _Block(len(self._blocks), "tool-call", call.get("id") or new_call_id(), name or "")
                self._blocks.append(block)
                self._calls[key] = block
                out.append(BlockStart(index=block.index, block_type="tool-call"))
            elif name and not block.name:
                block.name = name
            arguments = function.get("arguments") or ""
            if not isinstance(arguments, str):  # some local servers send the arguments as an object
                arguments = json.dumps(arguments)
            out.append(
                ToolCallDelta(index=block.index, id=block.id, name=block.name or None, arguments_delta=arguments)
            )
            block.parts.append(arguments)

    def _close(self, out: list[StreamChunk]) -> None:
        if self._finish is None:
            raise LlmError("the model stream ended ([DONE]) without a finish_reason", codes.MALFORMED_RESPONSE)
        self.done = True
        if self._usage is not None:
            out.append(UsageChunk(usage=self._usage))
        out.append(Finish(reason=self.finish_reason()))

    def finish_reason(self) -> FinishReason:
        """What `finish_reason` (read by then) means, given what was said.

        `stop` and `tool_calls` both end `tool-calls` when a tool call was made and `stop`
        otherwise (some servers say `stop` after tool calls); `length` is `max-tokens`. A stop with
        no content at all is an error, as are a content filter and an unknown reason.
        """
        reason = self._finish
        if reason == "length":
            return FinishReason(kind="max-tokens")
        if not self._blocks:
            return FinishReason(
                kind="error",
                message=f"the model ended its answer without any content (finish_reason {reason!r})",
                code=codes.EMPTY_RESPONSE,
            )
        if reason in ("stop", "tool_calls"):
            return FinishReason(kind="tool-calls" if self._calls else "stop")
        if reason == "content_filter":
            return FinishReason(
                kind="error", message="the provider's content filter stopped the answer", code=codes.CONTENT_FILTER
            )
        if reason == "insufficient_system_resource":
            return FinishReason(kind="error", message="the provider ran out of resources mid-answer", code=codes.SERVER)
        return FinishReason(kind="error", message=f"unknown finish_reason {reason!r}", code=codes.MALFORMED_RESPONSE)


def _malformed(data: bytes) -> LlmError:
    return LlmError(f"unparsable event in the model stream: {excerpt(data)}", codes.MALFORMED_RESPONSE)


def excerpt(data: bytes | str, limit: int = EXCERPT) -> str:
    """A short, printable piece of a payload for an error message."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text if len(text) <= limit else text[:limit] + "..."
