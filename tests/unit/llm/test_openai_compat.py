"""The OpenAI-compatible adapter against a fake server on a real 127.0.0.1 socket."""

from __future__ import annotations

import email.utils
import logging
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from pydantic import ValidationError

import acp_agent
from acp_agent.agent.config import ModelEntry
from acp_agent.agent.keys import AGENTS
from acp_agent.credentials import Credentials, CredentialStore
from acp_agent.kernel import LoaderError, Row, compose
from acp_agent.llm import codes, openai_compat
from acp_agent.llm.errors import LlmError
from acp_agent.llm.openai_compat import Config, OpenAICompat, retry_after, translate
from acp_agent.llm.request import LlmRequest, UserMessage
from acp_agent.llm.retry import RETRY_EVENT, RetryData, RetryEvent
from acp_agent.llm.service import LLM, STREAM
from acp_agent.session.content import TextContent
from acp_agent.session.errors import UnknownEventType
from acp_agent.session.events import AssistantMessageEvent
from acp_agent.session.persistence import SESSIONS, read_log
from acp_agent.session.registry import default_registry
from tests.paths import ROOT

from .openai_server import (
    DONE,
    Cut,
    FakeOpenAI,
    Hang,
    Pause,
    Reply,
    answer,
    chunk,
    content,
    fake_openai,
    finish,
    reasoning,
    stream,
    tool,
    tools,
)

pytestmark = pytest.mark.anyio

KEY = "sk-test-0123456789abcdef"
LOGGER = "acp_agent.llm.openai_compat"


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    monkeypatch.delenv("DEEPSEEK_BASE_URL", raising=False)


def llm_request(provider: str = "deepseek", session_id: str = "session-1") -> LlmRequest:
    return LlmRequest(
        provider=provider,
        model="deepseek-chat",
        system="be brief",
        messages=[UserMessage(content=[TextContent(text="hi")])],
        route="s1",
        session_id=session_id,
    )


async def unreachable() -> Any:
    raise AssertionError("the adapter must own this call")


@asynccontextmanager
async def adapter_for(
    server: FakeOpenAI | None = None, credentials: Credentials | None = None, **config: Any
) -> AsyncIterator[OpenAICompat]:
    settings = {"baseUrl": server.url if server else "http://127.0.0.1:9", "retry": {"attempts": 1}, **config}
    adapter = OpenAICompat(Config.model_validate(settings), jitter=lambda: 0.0, credentials=credentials)
    try:
        yield adapter
    finally:
        await adapter.aclose()


async def call(adapter: OpenAICompat, request: LlmRequest | None = None) -> list[dict[str, Any]]:
    stream = await adapter.listener(request or llm_request(), unreachable)
    return [c.dump() async for c in stream]


async def failure(adapter: OpenAICompat) -> LlmError:
    with pytest.raises(LlmError) as caught:
        await call(adapter)
    return caught.value


def text_of(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["text"] for c in chunks if c["type"] == "text-delta")


# --- a call -------------------------------------------------------------------------------------


async def test_a_streamed_answer_posts_the_request_and_yields_chunks() -> None:
    async with fake_openai(stream(answer("Hello there, friend."))) as server, adapter_for(server) as adapter:
        assert adapter._client is None  # made on the first call
        chunks = await call(adapter)

    assert text_of(chunks) == "Hello there, friend."
    assert chunks[-2:] == [
        {
            "type": "usage",
            "usage": {"inputTokens": 122, "outputTokens": 95, "cacheReadTokens": 768, "reasoningTokens": 23},
        },
        {"type": "finish", "reason": {"kind": "stop"}},
    ]
    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", "/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.headers["user-agent"] == f"acp-agent/{acp_agent.__version__}"
    assert sent.body == {
        "model": "deepseek-chat",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_frames_and_characters_split_across_reads_come_out_whole() -> None:
    body = b"".join([reasoning("Réfléchir…"), content("中文"), content("😀 ok"), finish("stop"), DONE])
    cuts = [
        3,
        body.index("é".encode()) + 1,
        body.index("中".encode()) + 2,
        body.index("😀".encode()) + 3,
        len(body) - 4,
    ]
    pieces: list[bytes | Pause] = []
    for a, b in zip([0, *cuts], [*cuts, len(body)], strict=False):
        pieces += [body[a:b], Pause(0.01)]
    async with fake_openai(stream(pieces)) as server, adapter_for(server) as adapter:
        chunks = await call(adapter)

    assert [c["block"] for c in chunks if c["type"] == "block-end"] == [
        {"type": "reasoning", "text": "Réfléchir…"},
        {"type": "text", "text": "中文😀 ok"},
    ]
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_interleaved_parallel_tool_calls_over_http() -> None:
    parts = [
        tools(tool(0, "", id="call_a", name="bash"), tool(1, "", id="call_b", name="bash")),
        tools(tool(1, '{"command": ')),
        tools(tool(0, '{"command": "pwd"}')),
        tools(tool(1, '"ls"}')),
        finish("tool_calls"),
        DONE,
    ]
    async with fake_openai(stream(parts)) as server, adapter_for(server) as adapter:
        chunks = await call(adapter)

    assert [c["block"]["arguments"] for c in chunks if c["type"] == "block-end"] == [
        '{"command": "pwd"}',
        '{"command": "ls"}',
    ]
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}


async def test_other_providers_go_down_the_waterfall_and_the_connection_is_reused() -> None:
    async def other() -> str:
        return "the next listener"

    async with fake_openai(stream(answer("One.")), stream(answer("Two."))) as server, adapter_for(server) as adapter:
        assert await adapter.listener(llm_request(provider="replay"), other) == "the next listener"
        assert text_of(await call(adapter)) == "One."
        assert text_of(await call(adapter)) == "Two."
    assert server.connections == 1  # the end of the body was read after [DONE]


async def test_a_server_that_keeps_the_body_open_after_done_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "DRAIN_SECONDS", 0.05)
    async with fake_openai(stream([*answer("Hang."), Hang()]), stream([*answer("Cut."), Cut()])) as server:
        async with adapter_for(server) as adapter:
            with anyio.fail_after(2):
                assert (await call(adapter))[-1]["type"] == "finish"
                assert (await call(adapter))[-1]["type"] == "finish"


async def test_no_key_needed_for_a_local_server_and_the_config_model_fills_in() -> None:
    request = llm_request().model_copy(update={"model": ""})
    async with (
        fake_openai(stream(answer("Local."))) as server,
        adapter_for(server, apiKeyEnv="", model="qwen3") as adapter,
    ):
        await call(adapter, request)
    assert "authorization" not in server.requests[0].headers
    assert server.requests[0].body["model"] == "qwen3"


async def test_cancel_closes_the_http_stream_at_once() -> None:
    async with fake_openai(stream([content("partial"), Hang()])) as server, adapter_for(server) as adapter:
        got: list[Any] = []
        with anyio.CancelScope() as scope:
            async for c in await adapter.listener(llm_request(), unreachable):
                got.append(c)
                if c.type == "text-delta":
                    scope.cancel()
        assert scope.cancelled_caught
        with anyio.fail_after(10):
            await server.wait(lambda: server.disconnects == 1)
    assert [c.type for c in got] == ["block-start", "text-delta"]


async def test_a_consumer_that_stops_early_closes_the_stream() -> None:
    async with fake_openai(stream([content("partial"), Hang()])) as server, adapter_for(server) as adapter:
        stream_ = await adapter.listener(llm_request(), unreachable)
        assert (await stream_.__anext__()).type == "block-start"
        await stream_.aclose()
        await server.wait(lambda: server.disconnects == 1, timeout=1)


# --- failures -----------------------------------------------------------------------------------

OVERFLOW = (
    "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens "
    "(139000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."
)


@pytest.mark.parametrize(
    ("status", "said", "code", "message"),
    [
        (
            401,
            "Authentication Fails, Your api key: ****cdef is invalid",
            codes.AUTH,
            (
                "deepseek answered HTTP 401: Authentication Fails, Your api key: ****cdef is invalid "
                "(check the API key in DEEPSEEK_API_KEY)"
            ),
        ),
        (403, "forbidden", codes.AUTH, "deepseek answered HTTP 403: forbidden (check the API key in DEEPSEEK_API_KEY)"),
        (
            402,
            "Insufficient Balance",
            codes.QUOTA,
            "deepseek answered HTTP 402: Insufficient Balance (the account cannot pay for the call)",
        ),
        (429, "Rate Limit Reached", codes.RATE_LIMIT, "deepseek answered HTTP 429: Rate Limit Reached"),
        (400, "Invalid model", codes.INVALID_REQUEST, "deepseek answered HTTP 400: Invalid model"),
        (
            400,
            OVERFLOW,
            codes.CONTEXT_OVERFLOW,
            f"the conversation no longer fits the model's context window (deepseek answered HTTP 400: {OVERFLOW})",
        ),
        (404, "model 'x' not found", codes.INVALID_REQUEST, "deepseek answered HTTP 404: model 'x' not found"),
        (408, "too slow", codes.TIMEOUT, "deepseek answered HTTP 408: too slow"),
        (500, "Server Error", codes.SERVER, "deepseek answered HTTP 500: Server Error"),
        (503, "Server Overloaded", codes.SERVER, "deepseek answered HTTP 503: Server Overloaded"),
    ],
)
async def test_every_error_status_becomes_its_code(status: int, said: str, code: str, message: str) -> None:
    body = {"error": {"message": said, "type": "invalid_request_error", "param": None, "code": None}}
    async with fake_openai(Reply.error(status, body)) as server, adapter_for(server) as adapter:
        error = await failure(adapter)
    assert (error.code, error.status, error.message) == (code, status, message)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"<html>Bad Gateway</html>", "<html>Bad Gateway</html>"),
        (b"", "(empty body)"),
        (b'{"message": "bare"}', "bare"),
        (b'{"error": "plain"}', "plain"),
        (b'{"error": {"code": 7}}', "{'code': 7}"),
        (b"[1, 2]", "[1, 2]"),
        (b"x" * 100_000, "x" * 500 + "..."),
    ],
)
async def test_what_an_error_body_says_is_quoted_briefly(body: bytes, said: str) -> None:
    async with fake_openai(Reply.error(502, body)) as server, adapter_for(server) as adapter:
        error = await failure(adapter)
    assert error.message == f"deepseek answered HTTP 502: {said}"


async def test_a_redirect_is_an_invalid_request() -> None:
    async with (
        fake_openai(Reply.error(301, b"", Location="https://elsewhere")) as server,
        adapter_for(server) as adapter,
    ):
        error = await failure(adapter)
    assert (error.code, error.status) == (codes.INVALID_REQUEST, 301)


async def test_the_key_is_never_echoed_in_an_error() -> None:
    body = {"error": {"message": f"Incorrect API key provided: {KEY}"}}
    async with fake_openai(Reply.error(401, body)) as server, adapter_for(server) as adapter:
        error = await failure(adapter)
    assert KEY not in error.message and KEY not in str(error)
    assert "Incorrect API key provided: ***" in error.message


async def test_no_key_is_a_missing_credential_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "")
    async with fake_openai() as server, adapter_for(server) as adapter:
        with pytest.raises(LlmError) as caught:
            await adapter.listener(llm_request(), unreachable)
    assert caught.value.code == codes.MISSING_CREDENTIAL
    assert caught.value.message == (
        f"Authentication required: no deepseek API key (the model at {server.url} needs one): set the"
        " environment variable DEEPSEEK_API_KEY, or sign in (`acp-agent login`) to store one"
    )
    assert server.requests == []


async def test_the_environment_wins_over_the_stored_key_read_at_each_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CredentialStore(tmp_path / "credentials")
    store.save({"DEEPSEEK_API_KEY": "sk-stored"})
    replies = [stream(answer(str(n))) for n in range(3)]
    async with fake_openai(*replies) as server, adapter_for(server, credentials=Credentials(store)) as adapter:
        await call(adapter)  # KEY is in the environment
        monkeypatch.setenv("DEEPSEEK_API_KEY", "")
        await call(adapter)
        store.save({"DEEPSEEK_API_KEY": "sk-signed-in-again"})  # by another process: seen at once
        await call(adapter)
        store.forget()
        error = await failure(adapter)
    sent = [r.headers["authorization"] for r in server.requests]
    assert sent == [f"Bearer {KEY}", "Bearer sk-stored", "Bearer sk-signed-in-again"]
    assert error.code == codes.MISSING_CREDENTIAL


async def test_a_damaged_credentials_file_is_a_missing_credential_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "")
    path = tmp_path / "credentials"
    path.write_text('{"DEEPSEEK_API_KEY": "sk-half')
    async with adapter_for(credentials=Credentials(CredentialStore(path))) as adapter:
        error = await failure(adapter)
    assert error.code == codes.MISSING_CREDENTIAL
    assert error.message == f"Authentication required: {path} is damaged (not JSON); sign in again"


@pytest.mark.parametrize(
    ("reply", "verdict", "detail"),
    [
        (Reply.error(200, {"object": "list", "data": []}), "accepted", ""),
        (Reply.error(401, {"error": {"message": f"bad key {KEY}"}}), "rejected", "HTTP 401: bad key ***"),
        (Reply.error(403, b"forbidden"), "rejected", "HTTP 403: forbidden"),
        (Reply.error(404, b"no such route"), "unchecked", "{url}/models answered HTTP 404"),
        (Reply.drop(), "unchecked", "cannot reach {url}/models: "),
    ],
)
async def test_check_key_asks_the_models_route_once(reply: Reply, verdict: str, detail: str) -> None:
    async with fake_openai(reply) as server, adapter_for(server) as adapter:
        checked = await adapter.check_key(KEY)
    assert checked.verdict == verdict
    assert checked.detail.startswith(detail.format(url=server.url))
    assert KEY not in checked.detail
    [request] = server.requests
    assert (request.method, request.path, request.headers["authorization"]) == ("GET", "/models", f"Bearer {KEY}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_nobody_listening_is_a_transport_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with adapter_for(baseUrl=url) as adapter:
        error = await failure(adapter)
    assert error.code == codes.TRANSPORT
    assert error.message.startswith(f"cannot reach deepseek at {url}: ")


async def test_silence_longer_than_the_idle_timeout_is_a_timeout() -> None:
    replies = [stream([Hang()]), stream([content("partial"), Hang()])]
    async with fake_openai(*replies) as server, adapter_for(server, streamIdleTimeout=0.2) as adapter:
        for _ in replies:
            with anyio.fail_after(3):
                error = await failure(adapter)
            assert (error.code, error.message) == (codes.TIMEOUT, "deepseek sent nothing for 0.2 s (streamIdleTimeout)")
        await server.wait(lambda: server.disconnects == 2)


async def test_a_stream_that_ends_or_is_cut_before_done_is_stream_closed() -> None:
    replies = [
        stream([content("partial")]),
        stream([content("partial"), Cut()]),
        stream([content("x"), finish(), b"data: [DO"]),
    ]
    async with fake_openai(*replies) as server, adapter_for(server) as adapter:
        ended = await failure(adapter)
        cut = await failure(adapter)
        torn = await failure(adapter)
    assert (ended.code, ended.message) == (codes.STREAM_CLOSED, "the deepseek stream ended before [DONE]")
    assert cut.code == codes.STREAM_CLOSED
    assert cut.message.startswith("the deepseek stream was cut before it finished: ")
    assert torn.code == codes.MALFORMED_RESPONSE


async def test_an_unparsable_event_or_an_answer_that_is_no_event_stream_is_a_malformed_response() -> None:
    replies = [
        stream([b"data: {oops\n\n"]),
        Reply(200, [b'{"choices": []}'], content_type="application/json"),
        Reply(200, [b"<html><body>Sign in to the Wi-Fi</body></html>"], content_type="text/html; charset=utf-8"),
        Reply(200, answer("Fine."), content_type="Text/Event-Stream; charset=utf-8"),
    ]
    async with fake_openai(*replies) as server, adapter_for(server) as adapter:
        garbage = await failure(adapter)
        json_answer = await failure(adapter)
        html_page = await failure(adapter)
        streamed = await call(adapter)
    assert (garbage.code, garbage.message) == (codes.MALFORMED_RESPONSE, "unparsable event in the model stream: {oops")
    assert (json_answer.code, json_answer.message) == (
        codes.MALFORMED_RESPONSE,
        'expected an event stream, got application/json: {"choices": []}',
    )
    assert (html_page.code, html_page.message) == (
        codes.MALFORMED_RESPONSE,
        "expected an event stream, got text/html: <html><body>Sign in to the Wi-Fi</body></html>",
    )
    assert text_of(streamed) == "Fine."  # the media type is read case-blind, parameters aside


async def test_an_error_event_mid_stream_is_classified_by_its_code() -> None:
    replies = [
        stream([b'data: {"error": {"message": "overloaded"}}\n\n']),
        stream([b'data: {"error": {"message": "context length exceeded", "code": 400}}\n\n']),
    ]
    async with fake_openai(*replies) as server, adapter_for(server) as adapter:
        server_error = await failure(adapter)
        overflow = await failure(adapter)
    assert (server_error.code, server_error.message) == (
        codes.SERVER,
        "deepseek reported an error mid-stream: overloaded",
    )
    assert overflow.code == codes.CONTEXT_OVERFLOW


async def test_an_exception_that_is_no_provider_failure_goes_through(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def stream(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a bug")

    async with adapter_for() as adapter:
        monkeypatch.setattr(adapter, "client", Broken)
        with pytest.raises(RuntimeError, match="a bug"):
            await call(adapter)


# --- retries ------------------------------------------------------------------------------------


async def test_a_429_is_retried_after_its_retry_after(caplog: pytest.LogCaptureFixture) -> None:
    replies = [Reply.error(429, {"error": {"message": "slow down"}}, Retry_After="0.2"), stream(answer("Finally."))]
    async with fake_openai(*replies) as server, adapter_for(server, retry={"attempts": 3}) as adapter:
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, LOGGER):
            chunks = await call(adapter)
        elapsed = time.monotonic() - start
    assert text_of(chunks) == "Finally."
    assert elapsed >= 0.2
    assert len(server.requests) == 2
    assert [r.getMessage() for r in caplog.records] == [
        "deepseek: deepseek answered HTTP 429: slow down [RATE_LIMIT]; retry 1 of 2 in 0.20 s"
    ]
    assert KEY not in caplog.text


async def test_server_and_transport_failures_back_off_exponentially_then_give_up() -> None:
    replies = [Reply.error(500, b"a"), Reply.drop(), Reply.error(503, b"c"), stream(answer("never"))]
    config = {"retry": {"attempts": 3, "baseDelay": 0.05, "maxDelay": 0.08}}
    async with fake_openai(*replies) as server, adapter_for(server, **config) as adapter:
        start = time.monotonic()
        error = await failure(adapter)
        elapsed = time.monotonic() - start
    assert (error.code, error.status, error.message) == (codes.SERVER, 503, "deepseek answered HTTP 503: c")
    assert len(server.requests) == 3
    assert 0.05 + 0.08 <= elapsed < 2


async def test_nothing_is_retried_once_a_chunk_reached_the_agent() -> None:
    replies = [
        stream([content("half"), b'data: {"error": {"message": "overloaded", "code": 503}}\n\n']),
        stream(answer("no")),
    ]
    async with fake_openai(*replies) as server, adapter_for(server, retry={"attempts": 3, "baseDelay": 0}) as adapter:
        got: list[str] = []
        with pytest.raises(LlmError) as caught:
            async for c in await adapter.listener(llm_request(), unreachable):
                got.append(c.type)
    assert caught.value.code == codes.SERVER
    assert got == ["block-start", "text-delta"]
    assert len(server.requests) == 1


async def test_the_backoff_doubles_up_to_the_cap_jitter_shortens_it_and_a_long_retry_after_is_not_waited() -> None:
    config = Config(retry={"attempts": 5, "baseDelay": 1, "maxDelay": 3})  # type: ignore[arg-type]
    adapter = OpenAICompat(config, jitter=lambda: 1.0)
    assert [adapter._delay(attempt, None) for attempt in (1, 2, 3, 4)] == [0.75, 1.5, 2.25, 2.25]
    assert adapter._delay(1, 12.5) == 12.5
    assert adapter._delay(1, 600) == 0.75
    await adapter.aclose()


def test_retry_after_reads_milliseconds_seconds_and_dates() -> None:
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after(httpx.Headers({"retry-after-ms": "soon", "retry-after": "2"})) == 2.0
    assert retry_after(httpx.Headers({"retry-after": "-3"})) == 0.0
    assert 28 < (retry_after(httpx.Headers({"retry-after": soon})) or 0) <= 30
    assert retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after(httpx.Headers({"retry-after": "whenever"})) is None
    assert retry_after(httpx.Headers({})) is None


def test_translate_leaves_llm_errors_and_bugs_alone() -> None:
    config = Config()
    error = LlmError("x", codes.SERVER)
    assert translate(error, config, KEY, streaming=False) is error
    assert translate(KeyError("k"), config, KEY, streaming=True) is None
    protocol = translate(httpx.RemoteProtocolError("Server disconnected"), config, KEY, streaming=False)
    assert protocol is not None and protocol.code == codes.TRANSPORT


# --- the plugin ---------------------------------------------------------------------------------


def rows(tmp_path: Path, url: str, *extra: Row, **model: Any) -> list[Row]:
    return [
        Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path / "sessions")}),
        Row(id="llm", name="acp_agent.llm.service"),
        Row(id="tools", name="acp_agent.tools.plugin"),
        Row(id="agents", name="acp_agent.agent.plugin", config={"provider": "deepseek", "model": "deepseek-chat"}),
        Row(id="model", name="acp_agent.llm.openai_compat", config={"baseUrl": url, **model}),
        *extra,
    ]


async def test_a_retry_is_logged_in_the_calling_agents_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACP_AGENT_SESSIONS", raising=False)
    replies = [Reply.error(429, {"error": {"message": "busy"}}, Retry_After="0"), stream(answer("Done."))]
    async with fake_openai(*replies) as server:
        ctx = compose(rows(tmp_path, server.url, retry={"attempts": 2}))
        async with ctx.running():
            agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
            reason = await agent.followup([TextContent(text="hi")]).wait()
            session_id = agent.id
            retries = [e for e in agent.session.events if e.type == RETRY_EVENT]
    assert reason.kind == "completed"
    assert [e.dump()["data"] for e in retries] == [
        {
            "provider": "deepseek",
            "attempt": 1,
            "attempts": 2,
            "delayMs": 0,
            "code": "RATE_LIMIT",
            "status": 429,
            "message": "deepseek answered HTTP 429: busy",
        }
    ]
    path = tmp_path / "sessions" / session_id / "session.jsonl"
    on_disk = path.read_text()
    assert '"type":"llm/retry"' in on_disk.replace(" ", "")
    assert KEY not in on_disk
    # Informative only: the log still loads where no adapter registered the type.
    loaded = read_log(path, default_registry())
    assert [e.type for e in loaded.events if e.ignorable] == [RETRY_EVENT]


async def test_a_failed_turn_ends_error_with_the_message_and_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACP_AGENT_SESSIONS", raising=False)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "")
    async with fake_openai() as server:
        ctx = compose(rows(tmp_path, server.url))
        async with ctx.running():
            agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
            reason = await agent.followup([TextContent(text="hi")]).wait()
    assert reason.kind == "error" and reason.code == codes.MISSING_CREDENTIAL
    assert "DEEPSEEK_API_KEY" in reason.message


async def test_a_retry_goes_to_the_requests_callback_and_without_one_is_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    replies = [Reply.error(500, b"x"), stream(answer("a")), Reply.error(500, b"y"), stream(answer("b"))]
    reported: list[RetryData] = []
    async with fake_openai(*replies) as server:
        async with adapter_for(server, retry={"attempts": 2, "baseDelay": 0}) as adapter:
            request = llm_request().model_copy(update={"on_retry": reported.append})
            assert text_of(await call(adapter, request)) == "a"
            assert text_of(await call(adapter)) == "b"  # no callback: the warning alone
    assert [(r.attempt, r.code, r.status) for r in reported] == [(1, codes.SERVER, 500)]
    assert "on_retry" not in request.model_dump() and "onRetry" not in request.dump()
    assert len([r for r in caplog.records if "retry 1 of 1" in r.getMessage()]) == 2


async def test_the_plugin_serves_its_provider_registers_its_event_and_closes_its_client(tmp_path: Path) -> None:
    other = Row(
        id="other", name="acp_agent.llm.openai_compat", config={"provider": "local", "baseUrl": "http://127.0.0.1:1"}
    )
    async with fake_openai(stream(answer("Hi."))) as server:
        ctx = compose(rows(tmp_path, server.url, other))
        assert len(ctx.events.listeners(STREAM)) == 2  # two providers, one event type
        registry = ctx.get(SESSIONS).registry
        assert registry.invariant_class(RETRY_EVENT) == "turn"
        async with ctx.running():
            chunks = [c async for c in await ctx.get(LLM).stream(llm_request())]
            [adapter] = [listener.__self__ for listener in ctx.events.listeners(STREAM)][:1]
            assert adapter._client is not None
        assert adapter._client is None  # closed at shutdown
    assert chunks[-1].type == "finish"
    assert RetryEvent.model_fields["type"].default == RETRY_EVENT
    with pytest.raises(UnknownEventType):
        registry.invariant_class(RETRY_EVENT)  # unregistered with the rows


def test_config_defaults_env_and_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Config().base_url == "https://api.deepseek.com"
    monkeypatch.setenv("DEEPSEEK_BASE_URL", "http://localhost:11434/v1/")
    config = Config.model_validate({"apiKeyEnv": "", "maxTokens": "", "temperature": "0.3", "thinking": "disabled"})
    assert config.base_url == "http://localhost:11434/v1"
    assert (config.api_key_env, config.max_tokens, config.temperature, config.thinking) == (None, None, 0.3, "disabled")
    with pytest.raises(ValidationError, match="baseUrl must start with http"):
        Config(base_url="api.deepseek.com")
    with pytest.raises(ValidationError):
        Config.model_validate({"retry": {"attempts": 0}})
    with pytest.raises(LoaderError, match="loader row 'model'"):
        compose([Row(id="model", name="acp_agent.llm.openai_compat", config={"baseUrl": "x"})])


def test_importing_the_adapter_does_not_import_httpx() -> None:
    code = "import sys, acp_agent.llm.openai_compat; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


async def test_keep_alive_comments_and_the_first_deepseek_frame_say_nothing() -> None:
    parts = [
        b": keep-alive\n\n",
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        *answer("Ok."),
    ]
    async with fake_openai(stream(parts)) as server, adapter_for(server) as adapter:
        chunks = await call(adapter)
    assert [c["type"] for c in chunks][:2] == ["block-start", "text-delta"]


async def test_a_last_done_without_its_blank_line_still_ends_the_call() -> None:
    async with (
        fake_openai(stream([content("Ok."), finish("stop"), b"data: [DONE]"])) as server,
        adapter_for(server) as adapter,
    ):
        chunks = await call(adapter)
    assert chunks[-1] == {"type": "finish", "reason": {"kind": "stop"}}


async def test_the_adapter_rows_prices_cost_each_call_unless_the_model_entry_has_its_own(tmp_path: Path) -> None:
    pricing = {"input": 1.0, "output": 4.0}
    async with fake_openai(stream(answer("Done.")), stream(answer("Again."))) as server:
        ctx = compose(rows(tmp_path, server.url, pricing=pricing))
        llm = ctx.get(LLM)
        assert set(llm.pricing) == {"deepseek"}
        async with ctx.running():
            agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
            await agent.followup([TextContent(text="hi")]).wait()
            models = ctx.get(AGENTS).models
            ctx.get(AGENTS).models = [
                ModelEntry(id="deepseek-chat", pricing={"input": 0.0, "output": 0.0, "currency": "credits"})
            ]
            await agent.followup([TextContent(text="again")]).wait()
            ctx.get(AGENTS).models = models
            messages = [e.data for e in agent.session.events if isinstance(e, AssistantMessageEvent)]
    assert llm.pricing == {}  # the row's declaration goes with it
    usage = messages[0].usage
    assert usage is not None and messages[0].cost is not None
    assert (
        messages[0].cost.amount == (usage.input_tokens + (usage.cache_read_tokens or 0) + 4 * usage.output_tokens) / 1e6
    )
    assert messages[0].cost.currency == "USD"
    assert messages[1].cost is not None and (messages[1].cost.amount, messages[1].cost.currency) == (0.0, "credits")
