"""A loader plugin whose model calls stream a little text, then raise an exception whose `code` is
an integer (as a JSON-RPC error's is): the agent loop must end the turn `error`, not the server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.service import STREAM
from acp_agent.session.content import BlockStart, StreamChunk, TextDelta


class IntegerCodeError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


name = "failing-model"
inject = ("llm",)


class Config(PluginConfig):
    pass


async def _failing(request: LlmRequest, next: Callable[[], Awaitable[Any]]) -> AsyncIterator[StreamChunk]:
    async def stream() -> AsyncIterator[StreamChunk]:
        yield BlockStart(index=0, block_type="text")
        yield TextDelta(index=0, text="partial")
        raise IntegerCodeError("upstream answered a JSON-RPC error", -32603)

    return stream()


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.events.on(STREAM, _failing)
