"""A JSON-RPC connection over newline-delimited JSON: one reader, one writer, a task per request.

Incoming requests and notifications are dispatched through jsonrpcserver, each in its own task so
that `session/cancel` reaches a running `session/prompt`. Responses to the agent's own requests are
routed to the waiting caller and never answered. Frames are written by one task, whole, in order.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterable, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from jsonrpcserver import async_dispatch_to_serializable
from jsonrpcserver.methods import Methods

from acp_agent.acp.errors import ClientError, INTERNAL_ERROR

log = logging.getLogger(__name__)

_NOT_JSON = object()
_ANSWERED: ContextVar[list[Callable[[], None]]] = ContextVar("answered")
"""The callbacks to run once the request being handled in this context is answered."""


def encode(frame: Any) -> bytes:
    """A frame as one line: compact JSON, UTF-8, newline-terminated (JSON escapes any newline)."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def check_request(obj: Any) -> Any:
    """The JSON-RPC 2.0 envelope rules jsonrpcserver asks its validator to enforce."""
    items = obj if isinstance(obj, list) and obj else [obj]
    for item in items:
        if not (
            isinstance(item, dict)
            and item.get("jsonrpc") == "2.0"
            and isinstance(item.get("method"), str)
            and isinstance(item.get("params", {}), (dict, list))
            and isinstance(item.get("id", 0), (str, int, type(None)))
            and not isinstance(item.get("id", 0), bool)
        ):
            raise ValueError("not a JSON-RPC 2.0 request")
    return obj


def is_response(obj: Any) -> bool:
    return isinstance(obj, dict) and "method" not in obj and ("result" in obj or "error" in obj)


@dataclass
class _Waiter:
    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None


class Connection:
    """Serves `methods` (a jsonrpcserver method table called with this connection as context)."""

    def __init__(self, methods: Methods, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._methods = methods
        self._write = write
        self._send, self._outbox = anyio.create_memory_object_stream[bytes](math.inf)
        self._waiters: dict[int, _Waiter] = {}
        self._abandoned: set[int] = set()
        """Requests whose caller stopped waiting (cancelled, timed out): their late answers are
        expected and dropped quietly."""
        self._next_id = 0
        self._closed = False
        self.state: Any = None
        """Whatever the method handlers keep per connection (the ACP server object)."""

    async def serve(self, lines: AsyncIterable[bytes], on_eof: Callable[[], Awaitable[None]]) -> None:
        """Read frames until EOF; then `on_eof()` (cancel turns), wait for running requests, drain."""
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._write_loop)
            async with anyio.create_task_group() as requests:
                async for line in lines:
                    self._receive(line, requests)
                self._closed = True
                for waiter in self._waiters.values():
                    waiter.done.set()  # nobody will answer now
                await on_eof()
            self._send.close()

    def _receive(self, line: bytes, requests: TaskGroup) -> None:
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return
        try:
            obj: Any = json.loads(text)
        except ValueError:
            obj = _NOT_JSON
        if is_response(obj):
            self._resolve(obj)
        else:
            requests.start_soon(self._dispatch, text, obj)

    async def _dispatch(self, text: str, obj: Any) -> None:
        def deserialize(raw: str) -> Any:
            # Parsed once already; a parse failure is re-raised here so jsonrpcserver answers -32700.
            return json.loads(raw) if obj is _NOT_JSON else obj

        answered: list[Callable[[], None]] = []
        _ANSWERED.set(answered)  # this task's own context: the handler's tasks copy it
        try:
            response = await async_dispatch_to_serializable(
                text, self._methods, context=self, deserializer=deserialize, validator=check_request
            )
            if response:  # None for a notification; a batch of notifications gives []
                self._send.send_nowait(encode(response))
        finally:
            for callback in answered:
                callback()

    def _resolve(self, response: dict[str, Any]) -> None:
        request_id = response.get("id")
        # Our ids are ints: any other id (a list would not even hash; `false` and `0.0` equal 0)
        # answers no request of ours.
        waiter = self._waiters.get(request_id) if type(request_id) is int else None
        if waiter is None:
            if type(request_id) is int and request_id in self._abandoned:
                self._abandoned.discard(request_id)
                log.debug("dropping the late answer to request %d, which nobody waits for now", request_id)
            else:
                log.warning("dropping a response to no request of ours: id %r", response.get("id"))
            return
        waiter.response = response
        waiter.done.set()

    @staticmethod
    def when_answered(callback: Callable[[], None]) -> None:
        """Run `callback` once the response to the request being handled is queued (or the
        request ended without one): what must follow the answer on the wire waits for it."""
        _ANSWERED.get().append(callback)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Queue a notification; frames go out in the order they are queued."""
        self._send.send_nowait(encode({"jsonrpc": "2.0", "method": method, "params": params}))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Ask the client; the result, or `ClientError` for an error answer or a closed connection."""
        if self._closed:
            raise ClientError(INTERNAL_ERROR, "the client closed the connection")
        request_id = self._next_id
        self._next_id += 1
        waiter = self._waiters[request_id] = _Waiter()
        self._send.send_nowait(encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        try:
            await waiter.done.wait()
        finally:
            del self._waiters[request_id]
            if not waiter.done.is_set():
                self._abandoned.add(request_id)
        if waiter.response is None:
            raise ClientError(INTERNAL_ERROR, "the client closed the connection")
        if "error" in waiter.response:
            error = waiter.response["error"] or {}
            raise ClientError(error.get("code", INTERNAL_ERROR), error.get("message", ""), error.get("data"))
        return waiter.response.get("result")

    async def _write_loop(self) -> None:
        async with self._outbox:
            async for frame in self._outbox:
                batch = [frame]
                while True:  # coalesce what is already queued into one write
                    try:
                        batch.append(self._outbox.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                await self._write(b"".join(batch))
