"""The scripted model: model calls written by hand, per route, played like recorded ones.

It is how scenarios are authored without a real model: run the real server with a script, keep
the session logs it writes as the scenario's fixtures. Loader plugin: `acp_agent.llm.scripted`.

A script is a JSON object mapping a route to its list of calls, or a list (the route `s1`). A call:
`{"reasoning"?, "text"?, "toolCalls"?: [{"id", "name", "arguments": {...} or "argumentsText"}], "finish"?, "message"?,
"code"?, "usage"?}`, or `{"throw": {"message", "code", "status"?, "text"?}}`, or `{"hang": true}`.
`{{model}}` in a text or a reasoning is replaced, as it streams, by the model the request names:
the recorded log then shows which model each call went to.
"""

from __future__ import annotations

import json
import re
from contextlib import aclosing
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, TypeAdapter

from acp_agent.kernel.context import Context
from acp_agent.kernel.events import Next
from acp_agent.kernel.models import Model
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.llm.replay import ChunksEntry, Gate, Gates, HangEntry, ReplayEntry, ReplayModel, ThrowEntry, install
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.service import ModelStream
from acp_agent.session.content import (
    AssistantBlock,
    BlockEnd,
    BlockStart,
    Finish,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    UsageChunk,
)

_PIECE = re.compile(r"\S+\s*|\s+")


class ScriptedToolCall(Model):
    id: str
    name: str
    arguments: dict[str, Any] = {}
    arguments_text: str | None = None
    """The arguments exactly as streamed, in place of `arguments` (text that is no JSON object,
    or one no JSON encoder would write)."""


class ScriptedCall(Model):
    """One model answer: optional reasoning, text and tool calls, then a finish."""

    reasoning: str | None = None
    text: str | None = None
    tool_calls: list[ScriptedToolCall] = []
    finish: Literal["stop", "tool-calls", "max-tokens", "error"] | None = None
    message: str | None = None
    code: str | None = None
    usage: Usage = Usage(input_tokens=100, output_tokens=20)
    after: dict[str, int] = {}
    """Served only once each route named has been served this many calls (see `replay.Gate`)."""
    streamed: dict[str, int] = {}
    """Served only once each route named has streamed this many calls to their end."""
    notices: int = 0
    """Made only once the agent has received this many background children's notices in all."""


class ScriptedThrow(Model):
    message: str
    code: str
    status: int | None = None
    text: str | None = None
    """Text streamed before the request fails."""


class ThrowCall(Model):
    throw: ScriptedThrow


class HangCall(Model):
    hang: Literal[True]


Call = ThrowCall | HangCall | ScriptedCall
# Annotated: older pydantic releases cannot infer a TypeAdapter's type from a union.
_script: TypeAdapter[list[Call] | dict[str, list[Call]]] = TypeAdapter(list[Call] | dict[str, list[Call]])


def pieces(text: str) -> list[str]:
    """Split text the way a model streams it: a word and its trailing space per delta."""
    return _PIECE.findall(text) or [text]


def _text_block(index: int, kind: Literal["text", "reasoning"], text: str) -> list[StreamChunk]:
    delta = TextDelta if kind == "text" else ReasoningDelta
    block: AssistantBlock = TextBlock(text=text) if kind == "text" else ReasoningBlock(text=text)
    return [
        BlockStart(index=index, block_type=kind),
        *(delta(index=index, text=piece) for piece in pieces(text)),
        BlockEnd(index=index, block=block),
    ]


def _tool_block(index: int, call: ScriptedToolCall) -> list[StreamChunk]:
    arguments = json.dumps(call.arguments) if call.arguments_text is None else call.arguments_text
    third = max(1, len(arguments) // 3)
    parts = ["", arguments[:third], arguments[third : 2 * third], arguments[2 * third :]]
    return [
        BlockStart(index=index, block_type="tool-call"),
        *(ToolCallDelta(index=index, id=call.id, name=call.name, arguments_delta=part) for part in parts),
        BlockEnd(index=index, block=ToolCallBlock(id=call.id, name=call.name, arguments=arguments)),
    ]


def _content(reasoning: str | None, text: str | None, tool_calls: list[ScriptedToolCall]) -> list[StreamChunk]:
    chunks: list[StreamChunk] = []
    index = 0
    for kind, value in (("reasoning", reasoning), ("text", text)):
        if value is not None:
            chunks += _text_block(index, kind, value)  # type: ignore[arg-type]
            index += 1
    for call in tool_calls:
        chunks += _tool_block(index, call)
        index += 1
    return chunks


def compile_call(call: Call) -> ReplayEntry:
    """The stream a scripted call stands for."""
    if isinstance(call, HangCall):
        return HangEntry()
    if isinstance(call, ThrowCall):
        failure = call.throw
        return ThrowEntry(
            chunks=_content(None, failure.text, []), message=failure.message, code=failure.code, status=failure.status
        )
    kind = call.finish or ("tool-calls" if call.tool_calls else "stop")
    reason = FinishReason(kind=kind, message=call.message, code=call.code)
    chunks = _content(call.reasoning, call.text, call.tool_calls)
    return ChunksEntry(chunks=[*chunks, UsageChunk(usage=call.usage), Finish(reason=reason)])


def compile_script(data: Any) -> dict[str, list[ReplayEntry]]:
    """Every route's stream entries from a script (a list is the script of route `s1`)."""
    return {route: [compile_call(call) for call in calls] for route, calls in _routes(data).items()}


def script_gates(data: Any) -> Gates:
    """The gates a script's calls ask for (`after`, `notices`)."""
    return {
        route: {
            i: Gate(after=call.after, streamed=call.streamed, notices=call.notices)
            for i, call in enumerate(calls)
            if isinstance(call, ScriptedCall) and (call.after or call.streamed or call.notices)
        }
        for route, calls in _routes(data).items()
    }


def _routes(data: Any) -> dict[str, list[Call]]:
    script = _script.validate_python(data)
    return {"s1": script} if isinstance(script, list) else script


# Loader plugin.
name = "scripted"
inject = ("llm",)


class Config(PluginConfig):
    script: str = Field(description="Path of the JSON script file.")
    route_base: str = ""
    """As the replay model's: the routes of this process's agents are the ones played."""
    places: dict[str, str] = {}
    """As the replay model's: `{{cwd}}` in a call's arguments or text streams as this run's cwd."""


MODEL_PLACEHOLDER = "{{model}}"
AGENT_PLACEHOLDER = "{{{{agent:{route}}}}}"
"""`{{agent:<route>}}` in a text or a tool call's arguments streams as the session id of the agent
on that route (a background child the model names), once that agent has asked for a call."""


class ScriptedModel(ReplayModel):
    """The replay model over compiled script entries, filling in `{{model}}` per request."""

    async def listener(self, request: LlmRequest, next: Next[ModelStream]) -> ModelStream:
        return _fill(await super().listener(request, next), request.model)


async def _fill(stream: ModelStream, model: str) -> ModelStream:
    # A piece never splits a word (`pieces`), so the placeholder arrives whole in one delta.
    async with aclosing(stream):
        async for chunk in stream:
            if isinstance(chunk, (TextDelta, ReasoningDelta)) and MODEL_PLACEHOLDER in chunk.text:
                chunk = chunk.model_copy(update={"text": chunk.text.replace(MODEL_PLACEHOLDER, model)})
            elif isinstance(chunk, BlockEnd) and isinstance(chunk.block, (TextBlock, ReasoningBlock)):
                text = chunk.block.text.replace(MODEL_PLACEHOLDER, model)
                chunk = chunk.model_copy(update={"block": chunk.block.model_copy(update={"text": text})})
            yield chunk


def apply(ctx: Context, config: Config) -> Disposer:
    data = json.loads(Path(config.script).read_text(encoding="utf-8"))
    aliases = {AGENT_PLACEHOLDER.format(route=route): route for route in _routes(data)}
    model = ScriptedModel(
        compile_script(data),
        gates=script_gates(data),
        aliases=aliases,
        route_base=config.route_base,
        places=config.places,
    )
    return install(ctx, model)
