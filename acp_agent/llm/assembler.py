"""Folds a chunk stream into the assistant message it spells: text, reasoning and tool-call blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

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


@dataclass
class _Partial:
    """A block still streaming: its deltas so far (kept as parts; joined once)."""

    block_type: str
    parts: list[str] = field(default_factory=list)
    call_id: str = ""
    name: str = ""

    def block(self) -> AssistantBlock:
        text = "".join(self.parts)
        if self.block_type == "tool-call":
            return ToolCallBlock(id=self.call_id, name=self.name, arguments=text)
        if self.block_type == "reasoning":
            return ReasoningBlock(text=text)
        return TextBlock(text=text)


class BlockAssembler:
    """Feed it chunks in order; read `blocks()`, `usage` and `finish` at any time.

    A `block-end` chunk carries the authoritative block; until it arrives the block is built from
    its deltas, so a stream cut short (cancel, error) still yields what was said. The tool calls of
    one message have distinct ids: a call that repeats an earlier call's id gets `<id>~2` (`~3`,
    ...), and `repeated` maps each such id to the one the model gave (the loop answers that call
    with an error: two results under one id would be one too many for the model and the log).
    """

    def __init__(self) -> None:
        self._blocks: dict[int, AssistantBlock | _Partial] = {}
        self.usage: Usage | None = None
        self.finish: FinishReason | None = None

    def feed(self, chunk: StreamChunk) -> None:
        match chunk:  # the deltas first: nearly every chunk is one
            case TextDelta():
                self._partial(chunk.index, "text").parts.append(chunk.text)
            case ReasoningDelta():
                self._partial(chunk.index, "reasoning").parts.append(chunk.text)
            case BlockStart():
                self._blocks[chunk.index] = _Partial(chunk.block_type)
            case ToolCallDelta():
                partial = self._partial(chunk.index, "tool-call")
                partial.call_id = chunk.id or partial.call_id
                partial.name = chunk.name or partial.name
                partial.parts.append(chunk.arguments_delta)
            case BlockEnd():
                self._blocks[chunk.index] = chunk.block
            case UsageChunk():
                self.usage = chunk.usage
            case Finish():  # pragma: no branch - the last kind of StreamChunk: no chunk gets past it
                self.finish = chunk.reason

    def _partial(self, index: int, block_type: str) -> _Partial:
        # Deltas without a block-start open the block implicitly: adapters need not send one.
        block = self._blocks.get(index)
        if not isinstance(block, _Partial):
            block = self._blocks[index] = _Partial(block_type)
        return block

    def blocks(self) -> list[AssistantBlock]:
        """The message content in block-index order (a block opened but still empty is left out)."""
        return self._numbered()[0]

    @property
    def repeated(self) -> dict[str, str]:
        """The ids given to calls that repeated an earlier call's id, to the id the model gave."""
        return self._numbered()[1]

    def _numbered(self) -> tuple[list[AssistantBlock], dict[str, str]]:
        blocks = [
            block.block() if isinstance(block, _Partial) else block
            for _, block in sorted(self._blocks.items())
            if not isinstance(block, _Partial) or block.parts
        ]
        ids = [block.id for block in blocks if isinstance(block, ToolCallBlock)]
        if len(set(ids)) == len(ids):  # nearly always: nothing to rename
            return blocks, {}
        taken, repeated = set(ids), {}
        seen: set[str] = set()
        for index, block in enumerate(blocks):
            if not isinstance(block, ToolCallBlock):
                continue
            if block.id in seen:
                n = 2
                while f"{block.id}~{n}" in taken:
                    n += 1
                fresh = f"{block.id}~{n}"
                taken.add(fresh)
                repeated[fresh] = block.id
                blocks[index] = block.model_copy(update={"id": fresh})
            seen.add(block.id)
        return blocks, repeated

    @property
    def streamed(self) -> bool:
        """Whether anything was said yet, so an interrupted stream has something to keep."""
        return bool(self.blocks())


def loggable(chunk: StreamChunk) -> StreamChunk:
    """`chunk`, with a tool call's id, name and arguments made Unicode text, as a log line must
    be: a lone surrogate (which a model stream's `\\ud800` escape can carry) becomes U+FFFD. A name
    so changed names no tool, so that call is answered as a call of an unknown tool."""
    if isinstance(chunk, ToolCallDelta):
        return _fixed(chunk, ("id", "name", "arguments_delta"))
    if isinstance(chunk, BlockEnd) and isinstance(chunk.block, ToolCallBlock):
        block = _fixed(chunk.block, ("id", "name", "arguments"))
        return chunk if block is chunk.block else chunk.model_copy(update={"block": block})
    return chunk


M = TypeVar("M", bound=BaseModel)


def _fixed(model: M, names: tuple[str, ...]) -> M:
    changed = {}
    for name in names:
        value = getattr(model, name)
        if isinstance(value, str) and (text := _text(value)) is not value:
            changed[name] = text
    return model.model_copy(update=changed) if changed else model


def _text(value: str) -> str:
    """`value`, or a copy with U+FFFD for each lone surrogate when it is not Unicode text."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value
