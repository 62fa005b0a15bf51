"""`ctx.get(LLM)`: the one way agents call a model, through the `llm/stream` waterfall."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable
from typing import Final, Protocol

from acp_agent.credentials.keys import Credentials
from acp_agent.kernel.context import Context, ServiceKey
from acp_agent.kernel.events import EventKey, Next
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.llm.pricing import Pricing
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.retry import RetryEvent
from acp_agent.session.content import StreamChunk
from acp_agent.session.persistence import SESSIONS

ModelStream = AsyncGenerator[StreamChunk]
"""A model's answer as it streams. The caller closes it with `aclose()`, so a cancelled call
releases what the adapter holds."""


class ModelAdapter(Protocol):
    """A model adapter: a listener of `STREAM`. It answers a request it serves (its provider's, say)
    with the model's stream, and defers one it does not serve with `return await next()`."""

    def __call__(self, request: LlmRequest, next: Next[ModelStream], /) -> Awaitable[ModelStream]: ...


STREAM: Final = EventKey[ModelAdapter]("llm/stream")
"""Waterfall event of the model adapters (`ModelAdapter`): the first that does not call `next`
owns the call."""


class LlmService:
    """Resolves a model call to whichever adapter owns it (the first listener not calling `next`).

    `credentials` holds the API keys the adapters need (they register them when applied) and the
    user's stored keys."""

    def __init__(self, ctx: Context, credentials: Credentials | None = None) -> None:
        self._ctx = ctx
        self.credentials = credentials if credentials is not None else Credentials()
        self.pricing: dict[str, Pricing] = {}
        """The prices each adapter row declares, by the provider it serves (`set_pricing`)."""

    def set_pricing(self, provider: str, pricing: Pricing) -> Disposer:
        """Declare the prices of `provider`'s models (those a model entry does not price itself)."""
        self.pricing[provider] = pricing

        def undeclare() -> None:
            if self.pricing.get(provider) is pricing:
                del self.pricing[provider]

        return undeclare

    async def stream(self, request: LlmRequest) -> ModelStream:
        return await self._ctx.events.waterfall(STREAM, request)


# Loader plugin: provides `LLM` and registers `llm/retry` (once, for every adapter row).
# Adapters (replay, openai_compat, scripted) are rows of their own.
name = "llm"
inject = ("sessions",)


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    return combine(ctx.get(SESSIONS).registry.register(RetryEvent, "turn"), ctx.provide(LLM, LlmService(ctx)))


LLM: Final = ServiceKey[LlmService]("llm")
"""The model service's key."""
