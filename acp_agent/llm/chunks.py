"""Stream chunk models. They are the log's vocabulary (every chunk is logged), so they live in
`acp_agent.session.content`; this module is their home for model-stream code."""

from __future__ import annotations

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

__all__ = [
    "AssistantBlock",
    "BlockEnd",
    "BlockStart",
    "Finish",
    "FinishReason",
    "ReasoningBlock",
    "ReasoningDelta",
    "StreamChunk",
    "TextBlock",
    "TextDelta",
    "ToolCallBlock",
    "ToolCallDelta",
    "Usage",
    "UsageChunk",
]
