"""`ctx.llm`: the one way agents call a model, through the `llm/stream` waterfall."""

from __future__ import annotations

from collections.abc import AsyncIterator

from acp_agent.kernel import Context, Disposer, PluginConfig, combine
from acp_agent.llm.chunks import StreamChunk
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.retry import RetryEvent

STREAM = "llm/stream"
"""Waterfall event; listeners are `async def (request, next) -> AsyncIterator[StreamChunk]`."""


class LlmService:
    """Resolves a model call to whichever adapter owns it (the first listener not calling `next`)."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        stream: AsyncIterator[StreamChunk] = await self._ctx.events.waterfall(STREAM, request)
        return stream


# Loader plugin: provides `ctx.llm` and registers `llm/retry` (once, for every adapter row).
# Adapters (replay, openai_compat, scripted) are rows of their own.
name = "llm"
inject = ("sessions",)


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    return combine(ctx.sessions.registry.register(RetryEvent, "turn"), ctx.provide("llm", LlmService(ctx)))
