"""`Connection.serve` in-process: a memory stream of lines in, a collecting `write` out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectSendStream
from jsonrpcserver import Success
from jsonrpcserver.methods import Methods

from acp_agent.acp.connection import Connection, encode
from acp_agent.acp.errors import INTERNAL_ERROR, ClientError
from acp_agent.acp.server import METHODS

pytestmark = pytest.mark.anyio
TIMEOUT = 5.0


@dataclass(eq=False)
class Peer:
    """The client end: feeds lines to `serve` and records every `write` call."""

    conn: Connection
    lines: MemoryObjectSendStream[bytes]
    writes: list[bytes] = field(default_factory=list)
    eof_calls: int = 0
    _changed: anyio.Event = field(default_factory=anyio.Event)

    async def write(self, data: bytes) -> None:
        self.writes.append(data)
        self._changed.set()
        self._changed = anyio.Event()

    async def send(self, frame: Any) -> None:
        await self.send_raw(json.dumps(frame).encode() + b"\n")

    async def send_raw(self, line: bytes) -> None:
        await self.lines.send(line)

    async def eof(self) -> None:
        await self.lines.aclose()

    @property
    def frames(self) -> list[Any]:
        return [json.loads(line) for line in b"".join(self.writes).splitlines()]

    async def wait_frames(self, count: int) -> list[Any]:
        with anyio.fail_after(TIMEOUT):
            while len(self.frames) < count:
                await self._changed.wait()
        return self.frames

    async def exchange(self, *frames: Any) -> Any:
        """Send `frames`, then a `ping`; the frames written before its answer (which is dropped)."""
        before = len(self.frames)
        for frame in frames:
            await (self.send_raw(frame) if isinstance(frame, bytes) else self.send(frame))
        await self.send({"jsonrpc": "2.0", "id": "sync", "method": "ping"})
        with anyio.fail_after(TIMEOUT):
            while not any(f.get("id") == "sync" for f in self.frames[before:] if isinstance(f, dict)):
                await self._changed.wait()
        return [f for f in self.frames[before:] if not (isinstance(f, dict) and f.get("id") == "sync")]


@dataclass
class Gates:
    """Events the test methods wait on and set, so ordering is explicit rather than timed."""

    release: anyio.Event = field(default_factory=anyio.Event)
    started: anyio.Event = field(default_factory=anyio.Event)
    log: list[str] = field(default_factory=list)


def methods_for(gates: Gates) -> Methods:
    async def ping(conn: Connection) -> Any:
        return Success("pong")

    async def echo(conn: Connection, **params: Any) -> Any:
        return Success(params)

    async def block(conn: Connection) -> Any:
        gates.started.set()
        await gates.release.wait()
        gates.log.append("block returns")
        return Success("released")

    async def release(conn: Connection) -> Any:
        gates.log.append("release")
        gates.release.set()
        return Success(None)

    async def ask(conn: Connection, method: str = "client/ask", wait: bool = False) -> Any:
        if wait:
            await gates.release.wait()
        try:
            return Success({"answer": await conn.request(method, {"q": 1})})
        except ClientError as exc:
            return Success({"code": exc.code, "message": exc.message, "data": exc.data})

    async def chatty(conn: Connection, count: int) -> Any:
        for i in range(count):
            conn.notify("note", {"i": i})
        await anyio.sleep(0)
        conn.notify("note", {"i": count})
        return Success("said")

    async def big(conn: Connection, size: int) -> Any:
        return Success("x" * size)

    async def crash(conn: Connection) -> Any:
        raise RuntimeError("boom")

    return {
        "ping": ping,
        "echo": echo,
        "block": block,
        "release": release,
        "ask": ask,
        "chatty": chatty,
        "big": big,
        "crash": crash,
    }


@asynccontextmanager
async def serving(methods: Methods, on_eof: Callable[[], Awaitable[None]] | None = None) -> AsyncIterator[Peer]:
    """Serve `methods` until the block ends; then EOF and wait for `serve` to return."""
    send, receive = anyio.create_memory_object_stream[bytes](100)
    writes: list[bytes] = []
    peer: Peer

    async def write(data: bytes) -> None:
        await peer.write(data)

    conn = Connection(methods, write)
    peer = Peer(conn, send, writes)

    async def eof() -> None:
        peer.eof_calls += 1
        if on_eof is not None:
            await on_eof()

    async def lines() -> AsyncIterator[bytes]:
        async with receive:
            async for line in receive:
                yield line

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(conn.serve, lines(), eof)
            yield peer
            await peer.eof()


def request(method: str, params: Any = None, id: Any = 1) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


# -- concurrency ---------------------------------------------------------------------------------


async def test_a_slow_request_does_not_block_a_second_one() -> None:
    gates = Gates()
    async with serving(methods_for(gates)) as peer:
        await peer.send(request("block", id=1))
        await gates.started.wait()
        await peer.send(request("ping", id=2))
        assert await peer.wait_frames(1) == [{"jsonrpc": "2.0", "result": "pong", "id": 2}]
        gates.release.set()
        frames = await peer.wait_frames(2)
    assert frames[1] == {"jsonrpc": "2.0", "result": "released", "id": 1}


async def test_a_notification_reaches_a_running_request() -> None:
    gates = Gates()
    async with serving(methods_for(gates)) as peer:
        await peer.send(request("block", id=7))
        await gates.started.wait()
        await peer.send({"jsonrpc": "2.0", "method": "release"})  # a notification: never answered
        frames = await peer.wait_frames(1)
    assert gates.log == ["release", "block returns"]
    assert frames == [{"jsonrpc": "2.0", "result": "released", "id": 7}]


# -- our own requests ----------------------------------------------------------------------------


async def test_a_response_to_our_request_reaches_the_caller() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", id="a"))
        (asked,) = await peer.wait_frames(1)
        assert asked == {"jsonrpc": "2.0", "id": 0, "method": "client/ask", "params": {"q": 1}}
        await peer.send({"jsonrpc": "2.0", "id": 0, "result": {"ok": True}})
        frames = await peer.wait_frames(2)
    assert frames[1] == {"jsonrpc": "2.0", "result": {"answer": {"ok": True}}, "id": "a"}


async def test_an_answer_holding_a_lone_surrogate_reaches_the_caller_as_an_error() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", id="a"))
        await peer.wait_frames(1)
        await peer.send({"jsonrpc": "2.0", "id": 0, "result": {"content": "x\udfffy"}})
        frames = await peer.wait_frames(2)
    why = "the answer is not usable: result.content: holds a lone surrogate (U+DFFF), which is not Unicode text"
    assert frames[1] == {"jsonrpc": "2.0", "result": {"code": -32600, "message": why, "data": None}, "id": "a"}


async def test_concurrent_requests_are_answered_out_of_order() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", {"method": "first"}, id="a"))
        await peer.wait_frames(1)
        await peer.send(request("ask", {"method": "second"}, id="b"))
        frames = await peer.wait_frames(2)
        assert [(f["id"], f["method"]) for f in frames] == [(0, "first"), (1, "second")]
        await peer.send({"jsonrpc": "2.0", "id": 1, "result": "two"})
        assert (await peer.wait_frames(3))[2] == {"jsonrpc": "2.0", "result": {"answer": "two"}, "id": "b"}
        await peer.send({"jsonrpc": "2.0", "id": 0, "result": "one"})
        assert (await peer.wait_frames(4))[3] == {"jsonrpc": "2.0", "result": {"answer": "one"}, "id": "a"}


async def test_an_error_answer_raises_client_error() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", id=1))
        await peer.wait_frames(1)
        await peer.send({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "nope", "data": [1]}})
        frames = await peer.wait_frames(2)
    assert frames[1]["result"] == {"code": -32601, "message": "nope", "data": [1]}


async def test_an_empty_error_answer_is_an_internal_client_error() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", id=1))
        await peer.wait_frames(1)
        await peer.send({"jsonrpc": "2.0", "id": 0, "error": None})
        frames = await peer.wait_frames(2)
    assert frames[1]["result"] == {"code": INTERNAL_ERROR, "message": "", "data": None}


async def test_eof_while_waiting_for_the_client_raises_client_error() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", id=1))
        await peer.wait_frames(1)
    # The connection is closed now: the caller got ClientError and its answer was still written.
    result = peer.frames[1]["result"]
    assert result["code"] == INTERNAL_ERROR
    assert "closed the connection" in result["message"]


async def test_a_request_after_eof_raises_client_error_at_once() -> None:
    gates = Gates()

    async def on_eof() -> None:
        gates.release.set()  # the handler asks the client only after the input ended

    async with serving(methods_for(gates), on_eof) as peer:
        await peer.send(request("ask", {"wait": True}, id=1))
    assert peer.frames == [
        {
            "jsonrpc": "2.0",
            "result": {"code": INTERNAL_ERROR, "message": "the client closed the connection", "data": None},
            "id": 1,
        }
    ]


async def test_a_response_to_no_pending_request_is_dropped_and_never_answered() -> None:
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange(
            {"jsonrpc": "2.0", "id": 99, "result": 1},
            {"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "no"}},
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
            {"id": 3, "result": None},
        )
    assert written == []


async def test_a_late_duplicate_response_is_dropped() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", id=1))
        await peer.wait_frames(1)
        await peer.send({"jsonrpc": "2.0", "id": 0, "result": "first"})
        await peer.wait_frames(2)
        written = await peer.exchange({"jsonrpc": "2.0", "id": 0, "result": "again"})
    assert written == []
    assert peer.frames[1]["result"] == {"answer": "first"}


@pytest.mark.parametrize("bad_id", [[0], {"a": 0}, False, 0.0, "0"])
async def test_a_response_whose_id_is_not_one_we_could_have_sent_is_dropped(bad_id: Any) -> None:
    """Our ids are ints: an unhashable id must not crash the reader, and `false`/`0.0`/`"0"` are not `0`."""
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("ask", id=1))
        await peer.wait_frames(1)
        written = await peer.exchange({"jsonrpc": "2.0", "id": bad_id, "result": "wrong"})
        assert written == []
        await peer.send({"jsonrpc": "2.0", "id": 0, "result": "right"})
        frames = await peer.wait_frames(3)
    assert frames[2]["result"] == {"answer": "right"}


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"{not json\n", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (b'{"jsonrpc": "2.0", "id": 1,\n', "Expecting property name enclosed in double quotes"),
        (b"\xff\xfe\n", "Expecting value: line 1 column 1 (char 0)"),
        (b"nul\n", "Expecting value"),
        (b'{"id": NaN}\n', "NaN is not JSON"),
        (b"[-Infinity]\n", "-Infinity is not JSON"),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested deeper than the JSON parser allows"),
    ],
)
async def test_invalid_json_is_a_parse_error(line: bytes, why: str) -> None:
    async with serving(methods_for(Gates())) as peer:
        (error,) = await peer.exchange(line)
    assert error["id"] is None
    assert error["error"]["code"] == -32700
    assert error["error"]["message"].startswith(f"Parse error: {why}")


@pytest.mark.parametrize(
    ("frame", "answer_id", "why"),
    [
        ({}, None, 'jsonrpc must be "2.0"'),
        ("ping", None, "a request is a JSON object"),
        (3, None, "a request is a JSON object"),
        (None, None, "a request is a JSON object"),
        ([], None, "a request is a JSON object"),
        ({"jsonrpc": "2.0", "id": 1}, 1, "method must be a string"),
        ({"jsonrpc": "2.0"}, None, "method must be a string"),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 1, 'jsonrpc must be "2.0"'),
        ({"id": "a", "method": "ping"}, "a", 'jsonrpc must be "2.0"'),
        ({"jsonrpc": 2.0, "id": 1, "method": "ping"}, 1, 'jsonrpc must be "2.0"'),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, 1, "method must be a string"),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, "id must be a string, an integer or null"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, "id must be a string, an integer or null"),
        ({"jsonrpc": "2.0", "id": 1.0, "method": "ping"}, None, "id must be a string, an integer or null"),
        ({"jsonrpc": "2.0", "id": 2**63, "method": "ping"}, None, "id must be a string, an integer or null"),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None, "id must be a string, an integer or null"),
        ({"jsonrpc": "2.0", "id": {}, "method": "ping"}, None, "id must be a string, an integer or null"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": None}, 1, "params must be an object or an array"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"}, 1, "params must be an object or an array"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3}, 1, "params must be an object or an array"),
    ],
)
async def test_a_non_request_is_an_invalid_request_answered_on_its_id_when_it_has_one(
    frame: Any, answer_id: Any, why: str
) -> None:
    """jsonrpcserver's own schema would accept a fractional id; ACP's RequestId is int64 | string | null.
    A request whose id can be read is answered on it, so its caller does not wait forever."""
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange(frame)
    assert written == [
        {"jsonrpc": "2.0", "error": {"code": -32600, "message": f"Invalid request: {why}"}, "id": answer_id}
    ]


async def test_each_item_of_a_batch_is_answered_on_its_own() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(
            [
                request("ping", id=1),
                {"jsonrpc": "2.0", "id": 2},
                {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": "wrong"},
                7,
                {"jsonrpc": "2.0", "method": "ping"},
                request("echo", {"a": "\ud800"}, id=4),
                request("echo", {"a": 1}, id=5),
            ]
        )
    written = peer.frames  # EOF waited for the batch
    assert written == [
        [
            {"jsonrpc": "2.0", "result": "pong", "id": 1},
            {
                "jsonrpc": "2.0",
                "error": {"code": -32600, "message": "Invalid request: method must be a string"},
                "id": 2,
            },
            {
                "jsonrpc": "2.0",
                "error": {"code": -32600, "message": "Invalid request: params must be an object or an array"},
                "id": 3,
            },
            {
                "jsonrpc": "2.0",
                "error": {"code": -32600, "message": "Invalid request: a request is a JSON object"},
                "id": None,
            },
            {
                "jsonrpc": "2.0",
                "error": {
                    "code": -32602,
                    "message": "Invalid params: params.a: holds a lone surrogate (U+D800), which is not Unicode text",
                },
                "id": 4,
            },
            {"jsonrpc": "2.0", "result": {"a": 1}, "id": 5},
        ]
    ]


async def test_a_batch_too_big_to_answer_item_by_item_gets_one_error() -> None:
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange([request("ping", id=i) for i in range(1001)])
    message = "Invalid request: a batch of more than 1000 requests"
    assert written == [{"jsonrpc": "2.0", "error": {"code": -32600, "message": message}, "id": None}]


@pytest.mark.parametrize("request_id", [0, -1, 2**62, "", "abc", None])
async def test_every_valid_id_is_echoed(request_id: Any) -> None:
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange(request("ping", id=request_id))
    assert written == [{"jsonrpc": "2.0", "result": "pong", "id": request_id}]


async def test_a_batch_is_answered_as_a_batch_and_a_batch_of_notifications_not_at_all() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send([request("ping", id=1), {"jsonrpc": "2.0", "method": "ping"}, request("echo", {"a": 1}, id=2)])
        await peer.send([{"jsonrpc": "2.0", "method": "ping"}])
    written = peer.frames  # EOF waited for both batches
    assert written == [[{"jsonrpc": "2.0", "result": "pong", "id": 1}, {"jsonrpc": "2.0", "result": {"a": 1}, "id": 2}]]


async def test_an_unknown_method_is_method_not_found_and_never_answered_as_a_notification() -> None:
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange(
            request("session/nope", {}, id=4),
            {"jsonrpc": "2.0", "method": "session/nope", "params": {}},
        )
    assert written == [
        {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found", "data": "session/nope"}, "id": 4}
    ]


async def test_a_result_that_is_no_json_answers_an_internal_error_on_its_id() -> None:
    async def unencodable(conn: Connection) -> Any:
        return Success({"value": object()})

    async with serving({"unencodable": unencodable}) as peer:
        await peer.send(request("unencodable", id=1))
        await peer.send([request("unencodable", id=2)])
    written = peer.frames  # EOF waited for both
    message = "Internal error: cannot encode the response: Object of type object is not JSON serializable"
    assert sorted(written, key=str) == sorted(
        [
            {"jsonrpc": "2.0", "error": {"code": -32603, "message": message}, "id": 1},
            [{"jsonrpc": "2.0", "error": {"code": -32603, "message": message}, "id": 2}],
        ],
        key=str,
    )


async def test_a_notification_holding_a_lone_surrogate_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange({"jsonrpc": "2.0", "method": "echo", "params": {"a": "\ud800"}})
    assert written == []
    assert "dropping a echo notification: params.a: holds a lone surrogate" in caplog.text


async def test_a_failing_handler_is_an_internal_error() -> None:
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange(request("crash", id=1))
    error = {"code": -32603, "message": "Internal error", "data": "boom"}
    assert written == [{"jsonrpc": "2.0", "error": error, "id": 1}]


@pytest.mark.parametrize(
    ("method", "params", "named"),
    [
        ("initialize", {}, "protocolVersion: Field required"),
        ("initialize", {"protocolVersion": "one"}, "protocolVersion: Input should be a valid integer"),
        ("initialize", {"protocolVersion": "1"}, "protocolVersion: Input should be a valid integer"),
        ("initialize", {"protocolVersion": 1.0}, "protocolVersion: Input should be a valid integer"),
        ("initialize", {"protocolVersion": True}, "protocolVersion: Input should be a valid integer"),
        ("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": 3}}, "clientCapabilities.fs"),
        ("initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": 1}}, "clientCapabilities.terminal"),
        (
            "initialize",
            {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": "yes"}}},
            "clientCapabilities.fs.readTextFile: Input should be a valid boolean",
        ),
        ("authenticate", {}, "methodId: Field required"),
        ("authenticate", {"methodId": 5}, "methodId: Input should be a valid string"),
        ("session/new", {"mcpServers": []}, "cwd: Field required"),
        ("session/new", {"cwd": "/tmp"}, "mcpServers: Field required"),
        ("session/new", {"cwd": 1, "mcpServers": []}, "cwd: Input should be a valid string"),
        ("session/new", {"cwd": "/tmp", "mcpServers": {}}, "mcpServers: Input should be a valid list"),
        ("session/new", {"cwd": "/", "mcpServers": [], "additionalDirectories": "/x"}, "additionalDirectories"),
        ("session/prompt", {"prompt": []}, "sessionId: Field required"),
        ("session/prompt", {"sessionId": "s"}, "prompt: Field required"),
        ("session/prompt", {"sessionId": "s", "prompt": "hi"}, "prompt: Input should be a valid list"),
        ("session/prompt", {"sessionId": "s", "prompt": ["hi"]}, "prompt.0: Input should be a valid dictionary"),
        ("session/prompt", {"sessionId": 3, "prompt": []}, "sessionId: Input should be a valid string"),
        ("session/close", ["s1"], "ACP params are an object of named fields, not an array"),
        ("session/prompt", [], "sessionId: Field required"),  # no items: the named fields are missing
    ],
)
async def test_wrong_params_are_invalid_params_naming_the_field(method: str, params: Any, named: str) -> None:
    """The real method table: validation fails before any handler needs the server state."""
    async with serving(METHODS) as peer:
        (error,) = await peer.exchange(request(method, params, id=9))
    assert error["id"] == 9
    assert error["error"]["code"] == -32602
    assert error["error"]["message"].startswith("Invalid params: ")
    assert named in error["error"]["message"]


async def test_a_wrong_params_notification_is_not_answered() -> None:
    async with serving(METHODS) as peer:
        written = await peer.exchange({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 1}})
    assert written == []


async def test_positional_params_bind_positionally_and_unknown_named_params_are_refused() -> None:
    """jsonrpcserver binds params to the handler's signature; ACP's handlers take named params only."""
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange(
            request("ping", [], id=1), request("ping", ["s1"], id=2), request("ping", {"x": 1}, id=3)
        )
    assert written[0] == {"jsonrpc": "2.0", "result": "pong", "id": 1}
    assert [(f["id"], f["error"]["code"], f["error"]["message"]) for f in written[1:]] == [
        (2, -32602, "Invalid params"),
        (3, -32602, "Invalid params"),
    ]


async def test_unknown_fields_of_acp_params_are_ignored() -> None:
    async with serving(METHODS) as peer:
        written = await peer.exchange(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s", "future": {"x": 1}}},
        )
    assert written == []


# -- writing -------------------------------------------------------------------------------------


async def test_frames_are_written_whole_and_in_order() -> None:
    async with serving(methods_for(Gates())) as peer:
        await peer.send(request("chatty", {"count": 50}, id=1))
        await peer.send(request("big", {"size": 1_000_000}, id=2))
        await peer.wait_frames(53)
    for data in peer.writes:
        assert data.endswith(b"\n")
        for line in data.splitlines():
            json.loads(line)  # every write holds whole frames
    frames = peer.frames
    notes = [f["params"]["i"] for f in frames if f.get("method") == "note"]
    assert notes == list(range(51))
    assert frames.index({"jsonrpc": "2.0", "result": "said", "id": 1}) > max(
        i for i, f in enumerate(frames) if f.get("method") == "note"
    )
    assert {"jsonrpc": "2.0", "result": "x" * 1_000_000, "id": 2} in frames
    assert len(peer.writes) < len(frames)  # frames already queued go out in one write


async def test_blank_lines_are_ignored() -> None:
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange(b"\n", b"   \r\n", b"\t\n")
    assert written == []


async def test_eof_calls_on_eof_and_awaits_running_requests() -> None:
    gates = Gates()

    async def on_eof() -> None:
        gates.log.append("eof")
        gates.release.set()

    async with serving(methods_for(gates), on_eof) as peer:
        await peer.send(request("block", id=1))
        await gates.started.wait()
    # `serve` returned: the request it was running finished and its answer was written.
    assert gates.log == ["eof", "block returns"]
    assert peer.eof_calls == 1
    assert peer.frames == [{"jsonrpc": "2.0", "result": "released", "id": 1}]


async def test_eof_with_nothing_running() -> None:
    async with serving(methods_for(Gates())) as peer:
        pass
    assert peer.eof_calls == 1
    assert peer.writes == []


def test_encode_is_one_compact_utf8_line() -> None:
    data = encode({"text": "a\nb\u2028é", "n": [1, 2]})
    assert data == '{"text":"a\\nb\u2028é","n":[1,2]}\n'.encode()
    assert data.count(b"\n") == 1


def test_encode_writes_a_string_that_is_not_unicode_as_its_escape() -> None:
    assert encode({"id": "a\ud800é"}) == b'{"id":"a\\ud800\\u00e9"}\n'


async def test_unknown_members_of_a_request_are_tolerated() -> None:
    """jsonrpcserver's own schema refuses them (additionalProperties: false); extensions add them."""
    async with serving(methods_for(Gates())) as peer:
        written = await peer.exchange({**request("ping", id=1), "extension": {"x": 1}})
    assert written == [{"jsonrpc": "2.0", "result": "pong", "id": 1}]


async def test_a_request_nobody_waits_for_now_is_withdrawn_and_its_late_answer_dropped_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def impatient(conn: Connection) -> Any:
        with anyio.move_on_after(0):  # gives up at once: the request went out, nobody waits for it
            await conn.request("terminal/wait_for_exit", {})
        return Success("gave up")

    async with serving({"impatient": impatient}) as peer:
        await peer.send(request("impatient", id=1))
        frames = await peer.wait_frames(3)
        assert frames[0]["method"] == "terminal/wait_for_exit" and frames[2]["result"] == "gave up"
        # The client is told the request is withdrawn, so it can stop working on it.
        assert frames[1] == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 0}}
        with caplog.at_level("DEBUG", logger="acp_agent.acp.connection"):
            assert await peer.exchange({"jsonrpc": "2.0", "id": 0, "result": {"exitCode": 0}}) == []
            assert [r.levelname for r in caplog.records] == ["DEBUG"]
            await peer.exchange({"jsonrpc": "2.0", "id": 0, "result": {"exitCode": 0}})  # twice: unexpected
            assert [r.levelname for r in caplog.records] == ["DEBUG", "WARNING"]
