"""The real model adapter: any OpenAI-compatible chat-completions endpoint (DeepSeek by default).

It owns the `llm/stream` calls whose `provider` is its configured provider name (the others go on
down the waterfall). A call is one `POST {baseUrl}/chat/completions` streamed as server-sent
events over httpx; `openai_wire.py` makes the body and reads the events. Failures become
`LlmError`s with a code in one place (`translate`); RATE_LIMIT, SERVER and TRANSPORT failures are
retried with exponential backoff and jitter (or the server's `Retry-After`) as long as nothing of
the attempt reached the agent, and each retry is reported through the request's `on_retry` (the
agent loop logs it in the caller's session as `llm/retry`).

The API key is looked up at each call (the environment variable `apiKeyEnv`, else the key stored
by `acp-agent login` under that name: `acp_agent.credentials`), so the server starts (and answers
`initialize` and `session/new`) without one, and a sign-in or sign-out applies at the next call;
it is sent only in the `Authorization` header and never logged, persisted or echoed in an error.
The row registers its key (`api_key`) with `ctx.get(LLM).credentials`, with `check_key` (one
`GET {baseUrl}/models`) for the sign-in to try a key. httpx is imported, and its client made, on
the first call (start-up time).

Loader plugin: `acp_agent.llm.openai_compat`.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, suppress
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import Field, field_validator

import acp_agent
from acp_agent.credentials.keys import ApiKey, Credentials, KeyCheck, MissingKey, scrub
from acp_agent.environ.variables import hide_variables
from acp_agent.kernel.context import SHUTDOWN, Context
from acp_agent.kernel.events import Next
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.llm import codes
from acp_agent.llm.errors import LlmError
from acp_agent.llm.openai_wire import (
    RequestOptions,
    SseDecoder,
    StreamFailure,
    StreamTranslator,
    chat_request,
    encode,
    excerpt,
)
from acp_agent.llm.pricing import Pricing
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.retry import RetryData
from acp_agent.llm.service import LLM, STREAM, ModelStream

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.deepseek.com"
USER_AGENT = {"User-Agent": f"acp-agent/{acp_agent.__version__}"}
BASE_URL_ENV = "DEEPSEEK_BASE_URL"
DEFAULT_KEY_ENV = "DEEPSEEK_API_KEY"
RETRY_AFTER_CAP = 60.0
"""A `Retry-After` longer than this (seconds) is not waited for; the backoff applies instead."""
EVENT_STREAM_TYPES = frozenset({"text/event-stream", ""})
"""Media types of a 200 read as the stream; a server that sends none is given the benefit of the
doubt, any other (JSON, a proxy's HTML page) is MALFORMED_RESPONSE naming it."""
DRAIN_SECONDS = 0.5
"""After `[DONE]`, how long the rest of the body may take to arrive (so the connection is reused)."""
ERROR_BODY_LIMIT = 64 * 1024
MESSAGE_LIMIT = 500
"""The most characters of a provider's error message quoted in ours."""
_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long"
    r"|exceeds? the (available )?context",
    re.IGNORECASE,
)

# --- config -------------------------------------------------------------------------------------


class RetryPolicy(PluginConfig):
    attempts: int = Field(4, ge=1)
    """Attempts in all (1: never retry)."""
    base_delay: float = Field(0.5, ge=0)
    """Seconds before the first retry; doubled for each next one."""
    max_delay: float = Field(8.0, ge=0)
    """The longest backoff, in seconds (before jitter, which only shortens it)."""


class Config(PluginConfig, RequestOptions):
    """The row's config: the `RequestOptions` it adds to every request (their fields and
    defaults), and:"""

    provider: str = "deepseek"
    """The provider name requests must carry (the agents row's `provider`) for this adapter to serve them."""
    base_url: str = Field(
        default_factory=lambda: os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL, validate_default=True
    )
    """Where the API lives; `/chat/completions` is appended. Default: `$DEEPSEEK_BASE_URL`, else DeepSeek's."""
    api_key_env: str | None = DEFAULT_KEY_ENV
    """The environment variable holding the API key; empty or null for a server that needs none."""
    connect_timeout: float = Field(10.0, gt=0)
    """Seconds to connect (and to send the request)."""
    stream_idle_timeout: float = Field(120.0, gt=0)
    """Seconds the provider may stay silent (before the answer starts, or between two reads)."""
    retry: RetryPolicy = RetryPolicy()
    pricing: Pricing | None = None
    """The provider's prices per million tokens (a model entry of the agents row that declares its
    own wins): each call's cost is logged and the session's total shown (`usage_update.cost`)."""

    @field_validator("api_key_env", "model", "max_tokens", "temperature", "reasoning_effort", "thinking", mode="before")
    @classmethod
    def _unset_is_none(cls, value: object) -> object:
        # `${VAR:-}` expands to "" when the variable is not set.
        return None if value == "" else value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"baseUrl must start with http:// or https://, got {value!r}")
        return value.rstrip("/")


# --- failures -----------------------------------------------------------------------------------


class HttpFailure(Exception):
    """The provider answered a status other than 2xx; `body` is (the start of) what it said."""

    def __init__(self, status: int, body: bytes, headers: httpx.Headers) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.headers = headers


def translate(exc: Exception, config: Config, key: str | None, *, streaming: bool) -> LlmError | None:
    """The `LlmError` a failed call stands for, or None for an exception that is no provider
    failure (a bug: it goes through as it is). The one place where HTTP statuses, error bodies and
    httpx exceptions become codes; `streaming` says whether the response body was being read. The
    key is scrubbed from the message (a provider may quote what it was sent)."""
    import httpx

    provider = config.provider
    if isinstance(exc, LlmError):
        error = exc
    elif isinstance(exc, HttpFailure):
        error = _status_error(exc.status, f"{provider} answered HTTP {exc.status}", _provider_message(exc.body), config)
    elif isinstance(exc, StreamFailure):
        error = _status_error(
            exc.status or 500, f"{provider} reported an error mid-stream", _provider_message(exc.error), config
        )
    elif isinstance(exc, httpx.ReadTimeout):
        error = LlmError(
            f"{provider} sent nothing for {config.stream_idle_timeout:g} s (streamIdleTimeout)", codes.TIMEOUT
        )
    elif isinstance(exc, httpx.RemoteProtocolError) and streaming:
        error = LlmError(f"the {provider} stream was cut before it finished: {_brief(exc)}", codes.STREAM_CLOSED)
    elif isinstance(exc, httpx.HTTPError):
        error = LlmError(f"cannot reach {provider} at {config.base_url}: {_brief(exc)}", codes.TRANSPORT)
    else:
        return None
    message = scrub(error.message, key) if key else error.message
    return error if message == error.message else LlmError(message, error.code, error.status)


def _status_error(status: int, what: str, message: str, config: Config) -> LlmError:
    said = f"{what}: {message}"
    if status in (401, 403):
        return LlmError(f"{said} (check the API key in {config.api_key_env or 'the environment'})", codes.AUTH, status)
    if status == 402:
        return LlmError(f"{said} (the account cannot pay for the call)", codes.QUOTA, status)
    if status == 429:
        return LlmError(said, codes.RATE_LIMIT, status)
    if status >= 500:
        return LlmError(said, codes.SERVER, status)
    if status == 408:
        return LlmError(said, codes.TIMEOUT, status)
    if _OVERFLOW.search(message):
        return LlmError(
            f"the conversation no longer fits the model's context window ({said})", codes.CONTEXT_OVERFLOW, status
        )
    return LlmError(said, codes.INVALID_REQUEST, status)


def _provider_message(body: Any) -> str:
    """What an error body says: OpenAI's `{"error": {"message"}}` (or a bare `{"message"}`, or the
    text itself), shortened."""
    error: Any = body
    if isinstance(body, bytes):
        try:
            from pydantic_core import from_json

            error = from_json(body)
        except ValueError:
            return excerpt(body.strip(), MESSAGE_LIMIT) or "(empty body)"
    if isinstance(error, dict):
        inner = error.get("error", error)
        if isinstance(inner, dict):
            inner = inner.get("message", inner)
        error = inner
    return excerpt(error if isinstance(error, str) else str(error), MESSAGE_LIMIT)


def _brief(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


def retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, or `Retry-After` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# --- the adapter --------------------------------------------------------------------------------


class OpenAICompat:
    """Serves `llm/stream` for one provider over one lazily made httpx client."""

    def __init__(
        self, config: Config, *, jitter: Callable[[], float] = random.random, credentials: Credentials | None = None
    ) -> None:
        self.config = config
        self._credentials = credentials if credentials is not None else Credentials()
        self.api_key = (
            None
            if config.api_key_env is None
            else ApiKey(config.api_key_env, config.provider, config.base_url, self.check_key)
        )
        """The key this row needs (None: the server takes none)."""
        self.url = f"{config.base_url}/chat/completions"
        self._jitter = jitter
        self._client: httpx.AsyncClient | None = None

    async def listener(self, request: LlmRequest, next: Next[ModelStream]) -> ModelStream:
        if request.provider != self.config.provider:
            return await next()
        key = self._key()
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        return self._stream(request, headers, encode(chat_request(request, self.config)), key)

    def _key(self) -> str | None:
        if self.api_key is None:
            return None
        try:
            return self._credentials.key(self.api_key)
        except MissingKey as exc:
            raise LlmError(str(exc), codes.MISSING_CREDENTIAL) from None

    async def check_key(self, key: str) -> KeyCheck:
        """Try `key` with one cheap request, `GET {baseUrl}/models`: accepted on 2xx, rejected on 401
        or 403; anything else (no such route, a server error, no connection) tells nothing."""
        import httpx

        url = f"{self.config.base_url}/models"
        try:
            async with httpx.AsyncClient(timeout=self.config.connect_timeout, headers=USER_AGENT) as client:
                response = await client.get(url, headers={"Authorization": f"Bearer {key}"})
        except httpx.HTTPError as exc:
            return KeyCheck("unchecked", scrub(f"cannot reach {url}: {_brief(exc)}", key))
        status = response.status_code
        if response.is_success:
            return KeyCheck("accepted")
        if status in (401, 403):
            return KeyCheck("rejected", scrub(f"HTTP {status}: {_provider_message(response.content)}", key))
        return KeyCheck("unchecked", f"{url} answered HTTP {status}")

    def client(self) -> httpx.AsyncClient:
        """The HTTP client, made (and httpx imported) on first use."""
        if self._client is None:
            import httpx

            timeout = self.config.connect_timeout
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(
                    connect=timeout, read=self.config.stream_idle_timeout, write=timeout, pool=timeout
                ),
                headers=USER_AGENT,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def _stream(self, request: LlmRequest, headers: dict[str, str], body: bytes, key: str | None) -> ModelStream:
        client = self.client()
        attempt = 1
        while True:
            decoder, translator = SseDecoder(), StreamTranslator()
            reached = streaming = False
            try:
                async with client.stream("POST", self.url, content=body, headers=headers) as response:
                    if not response.is_success:
                        raise HttpFailure(response.status_code, await _read_capped(response), response.headers)
                    media_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                    if media_type not in EVENT_STREAM_TYPES:  # a JSON answer, a proxy's or portal's page
                        raise LlmError(
                            f"expected an event stream, got {media_type}: {excerpt(await _read_capped(response))}",
                            codes.MALFORMED_RESPONSE,
                        )
                    streaming = True
                    # httpx types `aiter_bytes()` as an AsyncIterator; it is an async generator.
                    async with aclosing(response.aiter_bytes()) as pieces:  # type: ignore[type-var]
                        async for piece in pieces:
                            for chunk in translator.feed(decoder.feed(piece)):
                                reached = True
                                yield chunk
                            if translator.done:
                                await _drain(pieces)
                                return
                        for chunk in translator.feed(decoder.close()):
                            reached = True
                            yield chunk
                    if translator.done:
                        return
                raise LlmError(f"the {self.config.provider} stream ended before [DONE]", codes.STREAM_CLOSED)
            except Exception as exc:
                error = translate(exc, self.config, key, streaming=streaming)
                if error is None:
                    raise
                if reached or error.code not in codes.RETRYABLE or attempt >= self.config.retry.attempts:
                    raise error from (None if error is exc else exc)
                after = retry_after(exc.headers) if isinstance(exc, HttpFailure) else None
            delay = self._delay(attempt, after)
            self._record_retry(request, attempt, delay, error)
            await anyio.sleep(delay)
            attempt += 1

    def _delay(self, attempt: int, after: float | None) -> float:
        if after is not None and after <= RETRY_AFTER_CAP:
            return after
        policy = self.config.retry
        backoff = min(policy.max_delay, policy.base_delay * 2.0 ** (attempt - 1))
        return backoff * (1 - 0.25 * self._jitter())

    def _record_retry(self, request: LlmRequest, attempt: int, delay: float, error: LlmError) -> None:
        attempts = self.config.retry.attempts
        log.warning(
            "%s: %s [%s]; retry %d of %d in %.2f s",
            self.config.provider,
            error.message,
            error.code,
            attempt,
            attempts - 1,
            delay,
        )
        if request.on_retry is not None:
            retry = RetryData(
                provider=self.config.provider,
                attempt=attempt,
                attempts=attempts,
                delay_ms=round(delay * 1000),
                code=error.code,
                status=error.status,
                message=error.message,
            )
            request.on_retry(retry)


async def _read_capped(response: httpx.Response) -> bytes:
    body = bytearray()
    async for piece in response.aiter_bytes():
        body += piece
        if len(body) >= ERROR_BODY_LIMIT:
            break
    return bytes(body[:ERROR_BODY_LIMIT])


async def _drain(pieces: AsyncIterator[bytes]) -> None:
    """Read what follows `[DONE]` (the end of the chunked body, normally already here) so the
    connection goes back to the pool; give up quietly after `DRAIN_SECONDS`."""
    import httpx

    with anyio.move_on_after(DRAIN_SECONDS), suppress(httpx.HTTPError):
        [piece async for piece in pieces]  # nothing is expected but the end of the chunked body


# --- loader plugin ------------------------------------------------------------------------------

name = "openai_compat"
inject = ("llm",)


def apply(ctx: Context, config: Config) -> Disposer:
    credentials = ctx.get(LLM).credentials
    adapter = OpenAICompat(config, credentials=credentials)
    required = [] if adapter.api_key is None else [credentials.require(adapter.api_key)]
    priced = [] if config.pricing is None else [ctx.get(LLM).set_pricing(config.provider, config.pricing)]
    return combine(
        *required,
        *priced,
        hide_variables(ctx, [config.api_key_env or ""]),  # commands and MCP servers never see the key
        ctx.events.on(STREAM, adapter.listener),
        ctx.events.on(SHUTDOWN, adapter.aclose),
    )
