"""Frames that must neither kill nor silence the real server process, and the errors they get:
nesting past the parser, strings that are not Unicode, envelopes that are not JSON-RPC 2.0, bad
batch items, frames over `maxFrameBytes`, and thousands of fuzzed frames over one process."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.e2e.wire import RECORD_CONFIG, Frame, Wire, spawn_server

pytestmark = pytest.mark.anyio


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def error_of(response: Frame) -> tuple[int, str]:
    assert "error" in response, response
    return response["error"]["code"], response["error"]["message"]


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"k": [value]}
    return value


def scripted_env(tmp_path: Path, script: Any) -> dict[str, str]:
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    return {"ACP_AGENT_SCRIPT": str(tmp_path / "script.json"), "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}


async def new_session(wire: Wire, cwd: Path) -> str:
    await wire.request("initialize", {"protocolVersion": 1})
    created = await wire.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return str(created["result"]["sessionId"])


async def test_frames_that_once_killed_the_server_get_their_errors_and_it_keeps_serving(tmp_path: Path) -> None:
    async with spawn_server(config=RECORD_CONFIG, env=scripted_env(tmp_path, [{"text": "Still here."}])) as wire:
        session_id = await new_session(wire, tmp_path)
        prompt_params = {"sessionId": session_id, "prompt": [text("a\ud800b")]}
        sent = {
            # A lone surrogate (sent as its JSON escape) in the id, the method, the prompt text.
            "\udc00": {"jsonrpc": "2.0", "id": "\udc00", "method": "session/list", "params": {}},
            "method": {"jsonrpc": "2.0", "id": "method", "method": "session/\ud800", "params": {}},
            "text": {"jsonrpc": "2.0", "id": "text", "method": "session/prompt", "params": prompt_params},
            # Parsed, but deeper than the session log could write: refused before any handler.
            "deep": {
                "jsonrpc": "2.0", "id": "deep", "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{**text("hi"), "_meta": nested(200)}]},
            },
            # Readable ids on invalid requests: answered on the id, not with id null.
            "wrong": {"jsonrpc": "2.0", "id": "wrong", "method": "session/list", "params": "wrong"},
            "1.0": {"jsonrpc": "1.0", "id": "1.0", "method": "session/list", "params": {}},
            "none": {"id": "none", "method": "session/list", "params": {}},
        }  # fmt: skip
        for frame in sent.values():
            await wire.send(frame)
        await wire.send_raw(b"[" * 100_000 + b"]" * 100_000 + b"\n")  # deeper than the parser's stack
        await wire.send(
            [
                {"jsonrpc": "2.0", "id": "b1", "method": "session/list", "params": {}},
                {"jsonrpc": "2.0", "id": "b2", "method": "session/list", "params": 3},
                {"jsonrpc": "2.0", "id": "b3", "method": "session/no_such_method", "params": {}},
            ]
        )
        answers = {request_id: await wire.response(request_id) for request_id in sent}
        for request_id in ("b1", "b2", "b3"):
            await wire.response(request_id)
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("hi")]})
    assert answers["\udc00"]["result"] == {"sessions": []}
    assert error_of(answers["method"]) == (-32601, "Method not found")
    assert answers["method"]["error"]["data"] == "session/\ud800"
    surrogate = "holds a lone surrogate (U+D800), which is not Unicode text"
    assert error_of(answers["text"]) == (-32602, f"Invalid params: params.prompt[0].text: {surrogate}")
    assert error_of(answers["deep"]) == (-32602, "Invalid params: params: nested deeper than 128 levels")
    assert error_of(answers["wrong"]) == (-32600, "Invalid request: params must be an object or an array")
    assert error_of(answers["1.0"]) == (-32600, 'Invalid request: jsonrpc must be "2.0"')
    assert error_of(answers["none"]) == (-32600, 'Invalid request: jsonrpc must be "2.0"')
    (batch,) = wire.batches
    assert [(f["id"], f.get("error", {}).get("code")) for f in batch] == [
        ("b1", None), ("b2", -32600), ("b3", -32601)
    ]  # fmt: skip
    assert answered["result"] == {"stopReason": "end_turn"}
    parse_errors = [f for f in wire.responses() if f.get("id") is None]
    assert [error_of(f) for f in parse_errors] == [(-32700, "Parse error: nested deeper than the JSON parser allows")]
    assert wire.garbage == []
    assert "Traceback" not in wire.stderr_text


def peak_rss_kib(pid: int) -> int:
    """The process's peak resident set (VmHWM), in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="peak memory is read from /proc")
async def test_a_frame_over_max_frame_bytes_is_answered_and_skipped_without_being_held(tmp_path: Path) -> None:
    limit = 1024 * 1024
    config = tmp_path / "cordis.yml"
    row = f"- id: connection\n  name: acp_agent.acp.plugin\n  config: {{maxFrameBytes: {limit}}}\n"
    config.write_text(f"- include: {RECORD_CONFIG.resolve()}\n" + row, encoding="utf-8")
    async with spawn_server(config=config, env=scripted_env(tmp_path, [])) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        at_the_limit = b'{"jsonrpc":"2.0","id":"max","method":"session/list","params":{"cwd":"/'
        at_the_limit += b"x" * (limit - len(at_the_limit) - 3) + b'"}}\n'
        await wire.send_raw(at_the_limit)
        assert "result" in await wire.response("max")
        before = peak_rss_kib(wire.process.pid)
        # 48 MiB of one frame, sent in pieces as a client would write it, then a request.
        piece = b'{"jsonrpc":"2.0","id":"huge","method":"session/list","params":{"cwd":"' + b"y" * (1024 * 1024)
        for _ in range(48):
            await wire.send_raw(piece)
        await wire.send_raw(b'"}}\n')
        answered = await wire.request("session/list", {})
        after = peak_rss_kib(wire.process.pid)
    assert answered["result"] == {"sessions": []}
    assert after - before < 8 * 1024, f"the peak grew by {after - before} KiB for a 48 MiB frame"
    refused = [f for f in wire.responses() if f.get("id") is None]
    assert [error_of(f) for f in refused] == [(-32600, f"Invalid request: frame of more than {limit} bytes")]
    assert all(f.get("id") != "huge" for f in wire.responses())


# -- fuzzing ----------------------------------------------------------------------------------------

# Text with everything JSON can carry, lone surrogates included (written as their escapes).
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=5,
)
METHODS = [
    "initialize", "authenticate", "session/new", "session/prompt", "session/cancel", "session/load",
    "session/list", "session/resume", "session/close", "session/set_mode", "session/set_config_option",
    "$/cancel_request", "no/such/method",
]  # fmt: skip
params_like = st.fixed_dictionaries(
    {},
    optional={
        "protocolVersion": st.integers() | any_text,
        "sessionId": any_text | st.integers(),
        "cwd": st.sampled_from(["/", "/nonexistent", "relative"]) | any_text,
        "mcpServers": st.lists(json_values, max_size=2) | json_values,
        "prompt": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "resource_link", "image"])},
                                                 optional={"text": any_text, "uri": any_text, "name": any_text}),
                           max_size=3) | json_values,
        "modeId": any_text, "configId": st.sampled_from(["mode", "model"]) | any_text, "value": json_values,
        "methodId": any_text, "cursor": any_text, "_meta": json_values,
    },
)  # fmt: skip
ID_KINDS = ("int", "str", "null", "absent", "bool", "float", "list")
Line = tuple[bytes, "str | None"]
"""A line to send, and the id its answer is tracked by (when the id is readable)."""
Render = Callable[[Iterator[int]], list[Line]]
"""A drawn frame, written out in all its variants, each id made unique by the next number."""


@st.composite
def frames(draw: st.DrawFn) -> Render:
    shape = draw(st.sampled_from(["request", "request", "request", "request", "response", "raw", "deep"]))
    if shape == "raw":
        raw = draw(st.binary(max_size=40)).replace(b"\n", b" ")
        return lambda numbers: [(raw, None)]
    if shape == "deep":
        depth = draw(st.integers(100, 3000))
        deep = b'{"jsonrpc":"2.0","id":null,"method":"initialize","params":' + b"[" * depth + b"]" * depth + b"}"
        return lambda numbers: [(deep, None)]
    if shape == "response":
        response = {
            "jsonrpc": "2.0",
            "id": draw(json_values),
            draw(st.sampled_from(["result", "error"])): draw(json_values),
        }
        return lambda numbers: [(json.dumps(response).encode(), None)]
    frame: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        frame["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0]))
    frame["method"] = draw(st.sampled_from(METHODS) | any_text | st.integers())
    if draw(st.integers(0, 5)):
        frame["params"] = draw(params_like | json_values)
    prefix = draw(any_text)
    cut = draw(st.floats(0, 1))

    def with_id(kind: str, n: int) -> Line:
        tracked: str | None = None
        copy = dict(frame)
        if kind == "str":
            copy["id"] = tracked = f"{prefix}#{n}"
        elif kind == "int":
            copy["id"] = n
            tracked = str(n)
        elif kind != "absent":
            copy["id"] = {"null": None, "bool": True, "float": 1.5, "list": [1]}[kind]
        return json.dumps(copy).encode(), tracked

    def render(numbers: Iterator[int]) -> list[Line]:
        lines = [with_id(kind, next(numbers)) for kind in ID_KINDS]
        line, tracked = with_id("int", next(numbers))
        lines.append((b"[" + line + b"," + json.dumps(frame).encode() + b"]", tracked))  # with a notification
        lines.append((line[: int(cut * (len(line) - 1))], None))  # cut short
        return lines

    return render


def fuzzed_frames(lists: int) -> list[Line]:
    """Frames drawn by hypothesis, `lists` lists of 10 to 20 (derandomized: the same frames on
    every run), each request written with every kind of id, in a batch and cut short."""
    drawn: list[Render] = []

    @settings(max_examples=lists, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(st.lists(frames(), min_size=10, max_size=20))
    def collect(some: list[Render]) -> None:
        drawn.extend(some)

    collect()
    numbers = itertools.count(1)
    return [line for render in drawn for line in render(numbers)]


def tracked_id(frame: Frame) -> str | None:
    request_id = frame.get("id")
    return request_id if isinstance(request_id, str) else None if request_id is None else str(request_id)


async def test_fuzzed_frames_each_readable_id_is_answered_exactly_once_and_the_server_lives(tmp_path: Path) -> None:
    drawn = fuzzed_frames(35)
    tracked = [name for _, name in drawn if name is not None]
    assert len(drawn) > 1500  # about 3,000 (hypothesis decides how long each list is)
    assert len(set(tracked)) == len(tracked) > 500  # unique ids, so each answer is counted once
    async with spawn_server(config=RECORD_CONFIG, env=scripted_env(tmp_path, [])) as wire:
        for line, _ in drawn:
            await wire.send_raw(line + b"\n")
        await wire.send({"jsonrpc": "2.0", "id": "last", "method": "initialize", "params": {"protocolVersion": 1}})
        answered = await wire.response("last", timeout=30)
        with anyio.fail_after(30):
            while not set(tracked) <= {tracked_id(f) for f in wire.responses()}:
                await wire.wait_for(lambda f: "method" not in f, start=len(wire.received))
        exit_code = await wire.finish()
    assert answered["result"]["protocolVersion"] == 1
    counts: dict[str | None, int] = {}
    for frame in wire.responses():
        counts[tracked_id(frame)] = counts.get(tracked_id(frame), 0) + 1
    assert {name: counts.get(name, 0) for name in tracked if counts.get(name, 0) != 1} == {}
    assert wire.garbage == []
    assert exit_code == 0
    assert "Traceback" not in wire.stderr_text, wire.stderr_text[-3000:]
