"""A fake OpenAI-compatible server on a real 127.0.0.1 socket, speaking just enough HTTP/1.1.

Each request it reads takes the next scripted `Reply`: a status, headers and a body sent as HTTP
chunks exactly as the parts are written (one part per chunk, so a test decides where the client's
reads split), with pauses, a hang (wait until the client goes away) or a cut (close the socket
without ending the body) in between. Requests are kept (`requests`) with their JSON body and
headers; `disconnects` counts connections the client closed.

The event builders make DeepSeek-shaped `chat.completion.chunk` frames.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class Hang:
    """Send nothing more; wait until the client closes the connection."""


@dataclass(frozen=True)
class Cut:
    """Close the connection at once, leaving the chunked body unfinished."""


Part = bytes | Pause | Hang | Cut


@dataclass
class Reply:
    status: int = 200
    parts: list[Part] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"

    @classmethod
    def drop(cls) -> Reply:
        """Close the connection without answering at all."""
        return cls(0)

    @classmethod
    def error(cls, status: int, body: Any, **headers: str) -> Reply:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return cls(status, [data], {k.replace("_", "-"): v for k, v in headers.items()}, "application/json")


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(eq=False)
class FakeOpenAI:
    port: int = 0
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    disconnects: int = 0
    changed: anyio.Event = field(default_factory=anyio.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def wait(self, predicate: Any, timeout: float = 5.0) -> None:
        with anyio.fail_after(timeout):
            while not predicate():
                await self.changed.wait()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def handle(self, stream: SocketStream) -> None:
        self.connections += 1
        self._wake()
        reader = BufferedByteReceiveStream(stream)
        try:
            async with stream:
                while await self._serve_one(stream, reader):
                    pass
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            self.disconnects += 1
            self._wake()

    async def _serve_one(self, stream: SocketStream, reader: BufferedByteReceiveStream) -> bool:
        """Serve one request; whether the connection stays open for another."""
        head = await reader.receive_until(b"\r\n\r\n", 1 << 20)
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.receive_exactly(int(headers.get("content-length", "0")))
        self.requests.append(Received(method, path, headers, json.loads(raw) if raw else None))
        self._wake()
        reply = (
            self.replies.popleft() if self.replies else Reply.error(500, {"error": {"message": "no scripted reply"}})
        )
        return await self._send(stream, reply)

    async def _send(self, stream: SocketStream, reply: Reply) -> bool:
        if reply.status == 0:
            return False
        head = [f"HTTP/1.1 {reply.status} X", f"Content-Type: {reply.content_type}"]
        head += [f"{name}: {value}" for name, value in reply.headers.items()]
        if reply.content_type == "application/json":
            body = b"".join(part for part in reply.parts if isinstance(part, bytes))
            await stream.send(("\r\n".join([*head, f"Content-Length: {len(body)}"]) + "\r\n\r\n").encode() + body)
            return True
        await stream.send(("\r\n".join([*head, "Transfer-Encoding: chunked"]) + "\r\n\r\n").encode())
        for part in reply.parts:
            if isinstance(part, Pause):
                await anyio.sleep(part.seconds)
            elif isinstance(part, Hang):
                await _until_closed(stream)
                return False
            elif isinstance(part, Cut):
                return False
            elif part:
                await stream.send(b"%x\r\n%s\r\n" % (len(part), part))
        await stream.send(b"0\r\n\r\n")
        return True


async def _until_closed(stream: SocketStream) -> None:
    while True:
        await stream.receive()


@asynccontextmanager
async def fake_openai(*replies: Reply) -> AsyncIterator[FakeOpenAI]:
    """A running fake server with `replies` scripted; stopped (connections dropped) on exit."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    server = FakeOpenAI(port=listener.extra(anyio.abc.SocketAttribute.local_port), replies=deque(replies))
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(listener.serve, server.handle)
        try:
            yield server
        finally:
            tasks.cancel_scope.cancel()


# --- events -------------------------------------------------------------------------------------


def frame(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, usage: Any = None, choices: bool = True
) -> bytes:
    """One `chat.completion.chunk` event as DeepSeek streams it."""
    obj: dict[str, Any] = {
        "id": "3f0e5a9c-5d1b-4b8e-9a57-0c1d2e3f4a5b",
        "object": "chat.completion.chunk",
        "created": 1718345013,
        "model": "deepseek-chat",
        "system_fingerprint": "fp_ffc7281d48_prod0820_fp8_kvcache",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}] if choices else [],
    }
    if usage is not None:
        obj["usage"] = usage
    return frame(obj)


def content(text: str) -> bytes:
    return chunk({"content": text})


def reasoning(text: str) -> bytes:
    return chunk({"reasoning_content": text})


def tool(index: int, arguments: str, id: str | None = None, name: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        call.update(id=id, type="function")
        call["function"]["name"] = name
    return call


def tools(*calls: dict[str, Any]) -> bytes:
    return chunk({"tool_calls": list(calls)})


USAGE = {
    "prompt_tokens": 890,
    "completion_tokens": 95,
    "total_tokens": 985,
    "prompt_tokens_details": {"cached_tokens": 768},
    "prompt_cache_hit_tokens": 768,
    "prompt_cache_miss_tokens": 122,
    "completion_tokens_details": {"reasoning_tokens": 23},
}


def finish(reason: str = "stop", usage: Any = USAGE) -> bytes:
    return chunk({"content": ""}, finish=reason, usage=usage)


def answer(text: str, reason: str = "stop") -> list[bytes]:
    """The events of a plain text answer, a word an event, ending `[DONE]`."""
    words = [word + " " for word in text.split(" ")]
    words[-1] = words[-1][:-1]
    return [chunk({"role": "assistant", "content": ""}), *(content(word) for word in words), finish(reason), DONE]


def stream(parts: Iterable[bytes | Pause | Hang | Cut]) -> Reply:
    return Reply(200, list(parts))
