from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from acp_agent.kernel import Context, NoListener, Row, compose
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.retry import RETRY_EVENT
from acp_agent.llm.service import LLM, STREAM, LlmService
from acp_agent.session.content import StreamChunk, TextDelta
from acp_agent.session.persistence import SESSIONS

from .builders import collect, request


def test_the_plugin_provides_ctx_llm_and_registers_the_retry_event(tmp_path: Path) -> None:
    sessions = Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path)})
    ctx = compose([sessions, Row(id="llm", name="acp_agent.llm.service")])

    assert isinstance(ctx.get(LLM), LlmService)
    assert ctx.get(SESSIONS).registry.invariant_class(RETRY_EVENT) == "turn"
    ctx.scope.dispose()
    assert not ctx.has(LLM)


@pytest.mark.anyio
async def test_stream_runs_the_llm_stream_waterfall() -> None:
    ctx = Context()
    seen: list[str] = []

    async def observer(request: LlmRequest, next: Callable[[], Awaitable[Any]]) -> Any:
        seen.append(f"observer {request.route}")
        return await next()

    async def adapter(request: LlmRequest, next: Callable[[], Awaitable[Any]]) -> AsyncIterator[StreamChunk]:
        seen.append("adapter")

        async def stream() -> AsyncIterator[StreamChunk]:
            yield TextDelta(index=0, text=f"for {request.session_id}")

        return stream()

    async def fallback(request: LlmRequest, next: Callable[[], Awaitable[Any]]) -> Any:
        raise AssertionError("the adapter owns the call")

    ctx.events.on(STREAM, observer)
    ctx.events.on(STREAM, adapter)
    ctx.events.on(STREAM, fallback)
    service = LlmService(ctx)

    chunks = await collect(await service.stream(request("s1/call_a")))

    assert seen == ["observer s1/call_a", "adapter"]
    assert chunks == [TextDelta(index=0, text="for session-1")]


@pytest.mark.anyio
async def test_stream_without_an_adapter_fails() -> None:
    with pytest.raises(NoListener, match="llm/stream"):
        await LlmService(Context()).stream(request())
