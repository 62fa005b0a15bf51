"""Folds a chunk stream into the assistant message it spells: text, reasoning and tool-call blocks."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    its deltas, so a stream cut short (cancel, error) still yields what was said.
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
        return [
            block.block() if isinstance(block, _Partial) else block
            for _, block in sorted(self._blocks.items())
            if not isinstance(block, _Partial) or block.parts
        ]

    @property
    def streamed(self) -> bool:
        """Whether anything was said yet, so an interrupted stream has something to keep."""
        return bool(self.blocks())
