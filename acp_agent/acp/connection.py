"""A JSON-RPC connection over newline-delimited JSON: one reader, one writer, a task per request.

Incoming requests and notifications are dispatched through jsonrpcserver, each in its own task so
that `session/cancel` reaches a running `session/prompt`. Responses to the agent's own requests are
routed to the waiting caller and never answered. Frames are written by one task, whole, in order.

No frame can stop the reader: what `frames.py` finds unusable (too long, not JSON, too deep, not
a request, not Unicode) is answered with its error here, on the frame's id whenever it can be read,
and a batch is answered item by item.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

import anyio
from anyio.abc import TaskGroup

from acp_agent.acp import frames
from acp_agent.acp.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ClientError
from acp_agent.acp.jsonrpc import Methods, dispatch
from acp_agent.acp.outbox import Outbox

log = logging.getLogger(__name__)

CANCEL_REQUEST = "$/cancel_request"
"""The notification that withdraws a request (ACP's protocol-level cancellation)."""

_ANSWERED: ContextVar[list[Callable[[], None]]] = ContextVar("answered")
"""The callbacks to run once the request being handled in this context is answered."""
_READ_AT: ContextVar[int] = ContextVar("read_at")
"""Where the request being handled in this context was read (see `Connection.read_at`)."""

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))
"""One encoder each, made once: `json.dumps` with options builds a new one per call."""


def encode(frame: Any) -> bytes:
    """A frame as one line: compact JSON, UTF-8, newline-terminated (JSON escapes any newline).

    A string that is not Unicode (a lone surrogate, say in an id a client sent) is written as its
    JSON escape, so the frame still goes out and the client reads back the id it sent."""
    try:
        return _ENCODER.encode(frame).encode() + b"\n"
    except UnicodeEncodeError:
        return _ASCII_ENCODER.encode(frame).encode() + b"\n"


def encode_text(text: str) -> bytes:
    """A string as JSON, as `encode` writes it inside a frame."""
    try:
        return encode_basestring(text).encode()
    except UnicodeEncodeError:
        return encode_basestring_ascii(text).encode()


def error_frame(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": request_id}


def is_response(obj: Any) -> bool:
    return isinstance(obj, dict) and "method" not in obj and ("result" in obj or "error" in obj)


def readable_id(frame: Any) -> Any:
    """The id to answer `frame` on: its own when it can be read as an ACP RequestId, else null."""
    request_id = frame.get("id") if isinstance(frame, dict) else None
    return request_id if frames.is_request_id(request_id) else None


def _run_all(callbacks: list[Callable[[], None]]) -> None:
    """Run what waited for an answer (a session's command list, its MCP servers' start): one
    that raises is logged and the others still run; it never ends the reader's task group."""
    for callback in callbacks:
        try:
            callback()
        except Exception as exc:
            log.error("what followed an answer failed: %s", exc, exc_info=exc)


@dataclass
class _Waiter:
    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None


class Connection:
    """Serves `methods` (a jsonrpcserver method table called with this connection as context)."""

    def __init__(
        self,
        methods: Methods,
        write: Callable[[bytes], Awaitable[None]],
        *,
        max_frame_bytes: int = frames.MAX_FRAME_BYTES,
    ) -> None:
        self._methods = methods
        self.max_frame_bytes = max_frame_bytes
        self._outbox = Outbox(write)
        self.send: Callable[[bytes], None] = self._outbox.put
        """Queue a frame already encoded (one line, as `encode` makes it), in the order of the
        others: the outbox's own `put`, as it is called once per streamed chunk."""
        self._waiters: dict[int, _Waiter] = {}
        self._abandoned: set[int] = set()
        """Requests whose caller stopped waiting (cancelled, timed out): their late answers are
        expected and dropped quietly."""
        self._next_id = 0
        self._reads = 0
        """Requests read so far (a batch's items one by one): the next one's read position."""
        self._closed = False
        self._reading = anyio.CancelScope()
        self.state: Any = None
        """Whatever the method handlers keep per connection (the ACP server object)."""

    async def serve(self, chunks: AsyncIterable[bytes], on_eof: Callable[[], Awaitable[None]]) -> None:
        """Read frames from the input's bytes until EOF (or `stop()`); then `on_eof()` (cancel
        turns), wait for running requests, drain."""
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._outbox.run)
            async with anyio.create_task_group() as requests:
                with self._reading:
                    async for line in frames.split_frames(chunks, self.max_frame_bytes):
                        if line is frames.OVERSIZED:
                            message = f"Invalid request: frame of more than {self.max_frame_bytes} bytes"
                            self._reply(error_frame(None, INVALID_REQUEST, message))
                        else:
                            self._receive(line, requests)
                self._closed = True
                for waiter in self._waiters.values():
                    waiter.done.set()  # nobody will answer now
                await on_eof()
            self._outbox.close()

    def stop(self) -> None:
        """Stop reading, as if the input had ended: the same shutdown follows (a signal's)."""
        self._reading.cancel()

    def _receive(self, line: bytes, requests: TaskGroup) -> None:
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return
        try:
            obj: Any = frames.parse(text)
        except frames.ParseError as exc:
            self._reply(error_frame(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        if is_response(obj):
            self._resolve(obj, text)
            return
        read_at = self._reads
        if isinstance(obj, list) and obj:
            self._reads += len(obj)
            requests.start_soon(self._dispatch_batch, obj, text, read_at)
        else:
            self._reads += 1
            requests.start_soon(self._dispatch, obj, text, read_at)

    async def _dispatch(self, obj: Any, text: str, read_at: int) -> None:
        answered: list[Callable[[], None]] = []
        _ANSWERED.set(answered)  # this task's own context: the handler's tasks copy it
        _READ_AT.set(read_at)
        try:
            response = await self._answer(obj, text)
            if response is not None:
                self._reply(response)
        finally:
            _run_all(answered)

    async def _dispatch_batch(self, batch: list[Any], text: str, read_at: int) -> None:
        """Each item answered on its own, the answers sent together (none for notifications)."""
        if len(batch) > frames.MAX_BATCH:
            message = f"Invalid request: a batch of more than {frames.MAX_BATCH} requests"
            self._reply(error_frame(None, INVALID_REQUEST, message))
            return
        answers: list[dict[str, Any] | None] = [None] * len(batch)

        async def one(index: int, item: Any) -> None:
            # An item's callbacks run when its answer is ready, not once the whole batch is: a
            # prompt waiting for another item's turn in the same batch would wait forever.
            answered: list[Callable[[], None]] = []
            _ANSWERED.set(answered)
            _READ_AT.set(read_at + index)
            try:
                answers[index] = await self._answer(item, text)
            finally:
                _run_all(answered)

        async with anyio.create_task_group() as items:
            for index, item in enumerate(batch):
                items.start_soon(one, index, item)
        if any(answer is not None for answer in answers):
            self._reply([answer for answer in answers if answer is not None])

    async def _answer(self, item: Any, text: str) -> dict[str, Any] | None:
        """The response to one request (None for a notification), refused before dispatch when its
        envelope or its params are unusable."""
        problem = frames.envelope_problem(item)
        if problem is not None:
            return error_frame(readable_id(item), INVALID_REQUEST, f"Invalid request: {problem}")
        problem = frames.content_problem(item.get("params"), "params", text)
        if problem is not None:
            if "id" not in item:
                log.warning("dropping a %s notification: %s", item["method"], problem)
                return None
            return error_frame(item["id"], INVALID_PARAMS, f"Invalid params: {problem}")
        return await dispatch(item, self._methods, self)  # None for a notification

    def _reply(self, response: dict[str, Any] | list[dict[str, Any]]) -> None:
        try:
            data = encode(response)
        except (ValueError, TypeError, RecursionError) as exc:  # a result that is no JSON: a bug here
            log.error("cannot send a response: %s", exc)
            items = response if isinstance(response, list) else [response]
            message = f"Internal error: cannot encode the response: {exc}"
            failed = [error_frame(item["id"], INTERNAL_ERROR, message) for item in items]
            data = encode(failed if isinstance(response, list) else failed[0])
        self._outbox.put(data)

    def _resolve(self, response: dict[str, Any], text: str) -> None:
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
        member = "result" if "result" in response else "error"
        problem = frames.content_problem(response[member], member, text)
        if problem is not None:  # the caller gets an error it can report, not a crash later on
            response = error_frame(request_id, INVALID_REQUEST, f"the answer is not usable: {problem}")
        waiter.response = response
        waiter.done.set()

    @staticmethod
    def read_at() -> int:
        """Where the request being handled was read: requests are numbered in the order the
        connection read them (a batch's items in item order). Each runs in a task of its own, so
        handlers may run out of that order; this is how one tells which came first."""
        return _READ_AT.get()

    @staticmethod
    def when_answered(callback: Callable[[], None]) -> None:
        """Run `callback` once the response to the request being handled is queued (or the
        request ended without one): what must follow the answer on the wire waits for it."""
        _ANSWERED.get().append(callback)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Queue a notification; frames go out in the order they are queued."""
        self._outbox.put(encode({"jsonrpc": "2.0", "method": method, "params": params}))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Ask the client; the result, or `ClientError` for an error answer or a closed connection."""
        if self._closed:
            raise ClientError(INTERNAL_ERROR, "the client closed the connection")
        request_id = self._next_id
        self._next_id += 1
        waiter = self._waiters[request_id] = _Waiter()
        self._outbox.put(encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        try:
            await waiter.done.wait()
        finally:
            del self._waiters[request_id]
            if not waiter.done.is_set():
                # The caller stopped waiting (cancelled, timed out): the client is told, so it
                # drops the request (an editor takes its approval prompt down); a late answer
                # is dropped quietly.
                self._abandoned.add(request_id)
                self.notify(CANCEL_REQUEST, {"requestId": request_id})
        if waiter.response is None:
            raise ClientError(INTERNAL_ERROR, "the client closed the connection")
        if "error" in waiter.response:
            error = waiter.response["error"] or {}
            raise ClientError(error.get("code", INTERNAL_ERROR), error.get("message", ""), error.get("data"))
        return waiter.response.get("result")
