"""A raw NDJSON client for the real server process: what it sends, what it reads, nothing more.

`spawn_server(...)` starts `python -m acp_agent --config <config>` with the given environment (on
top of this process's, so coverage reaches the child) and yields a `Wire`. Every stdout line must
parse as a JSON object, or as an array of them (a batch's answers); a line that does not is kept
in `Wire.garbage` for the test to assert on. Stderr is collected. Requests the server sends us
are answered by `Wire.answer` (method not found unless a test installs a handler, which may also
leave a request unanswered), so a request of the agent's never hangs by accident.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.paths import ROOT

SNAPSHOT_CONFIG = ROOT / "cordis.snapshot.yml"
RECORD_CONFIG = ROOT / "cordis.record.yml"
TIMEOUT = 10.0
MAX_LINE = 64 * 1024 * 1024

Frame = dict[str, Any]
RequestHandler = Callable[[Frame], Awaitable[Frame | None]]


async def method_not_found(request: Frame) -> Frame:
    return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}


@dataclass(eq=False)
class Wire:
    process: Process
    answer: RequestHandler = method_not_found
    received: list[Frame] = field(default_factory=list)
    """Every stdout frame, in order (a batch answer's items one by one)."""
    batches: list[list[Frame]] = field(default_factory=list)
    """The batch answers, each whole."""
    garbage: list[bytes] = field(default_factory=list)
    """Stdout lines that were not JSON (must stay empty)."""
    stderr: bytearray = field(default_factory=bytearray)
    stdin_closed: bool = False
    _next_id: int = 0
    _changed: anyio.Event = field(default_factory=anyio.Event)
    _stdout_done: anyio.Event = field(default_factory=anyio.Event)
    _stderr_done: anyio.Event = field(default_factory=anyio.Event)

    # -- writing --------------------------------------------------------------------------

    async def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def send(self, frame: Any) -> None:
        await self.send_raw(json.dumps(frame).encode() + b"\n")

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def start(self, method: str, params: Any) -> int:
        """Send a request without waiting for its response; its id."""
        request_id = self.new_id()
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    async def request(self, method: str, params: Any, timeout: float = TIMEOUT) -> Frame:
        """Send a request and wait for its response frame."""
        return await self.response(await self.start(method, params), timeout)

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        if not self.stdin_closed:
            self.stdin_closed = True
            await self.process.stdin.aclose()

    # -- reading --------------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[Frame], bool], timeout: float = TIMEOUT, start: int = 0) -> Frame:
        """The first received frame (from index `start`) matching `predicate`; waits for it."""
        with anyio.fail_after(timeout):
            seen = start
            while True:
                for frame in self.received[seen:]:
                    if predicate(frame):
                        return frame
                seen = len(self.received)
                if self._stdout_done.is_set():
                    raise AssertionError(f"stdout ended without the awaited frame; stderr:\n{self.stderr_text}")
                await self._changed.wait()

    async def response(self, request_id: Any, timeout: float = TIMEOUT) -> Frame:
        return await self.wait_for(lambda f: "method" not in f and f.get("id") == request_id, timeout)

    def updates(self, session_id: str | None = None) -> list[Frame]:
        """The `session/update` params received so far (of one session, if given)."""
        return [
            f["params"]
            for f in self.received
            if f.get("method") == "session/update" and session_id in (None, f["params"]["sessionId"])
        ]

    def responses(self) -> list[Frame]:
        return [f for f in self.received if "method" not in f]

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    async def finish(self, timeout: float = TIMEOUT) -> int:
        """Close stdin, read stdout to its end and wait for the exit; the exit code."""
        await self.close_stdin()
        with anyio.fail_after(timeout):
            await self._stdout_done.wait()
            await self._stderr_done.wait()
            return await self.process.wait()

    async def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        stream = BufferedByteReceiveStream(self.process.stdout)
        try:
            while True:
                try:
                    line = await stream.receive_until(b"\n", MAX_LINE)
                except (anyio.IncompleteRead, anyio.EndOfStream):
                    if stream.buffer:
                        self.garbage.append(bytes(stream.buffer))  # an unterminated last line
                    return
                await self._take(line)
        finally:
            self._stdout_done.set()
            self._wake()

    async def _take(self, line: bytes) -> None:
        try:
            frame = json.loads(line)
        except ValueError:
            self.garbage.append(line)
            return
        if isinstance(frame, list) and frame and all(isinstance(item, dict) for item in frame):
            self.batches.append(frame)  # a batch's answers: each is also received on its own
            self.received += frame
            self._wake()
            return
        if not isinstance(frame, dict):
            self.garbage.append(line)
            return
        self.received.append(frame)
        self._wake()
        if "method" in frame and "id" in frame:
            answer = await self.answer(frame)
            if answer is not None:  # None: left unanswered, on purpose
                await self.send(answer)

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            async for chunk in self.process.stderr:
                self.stderr += chunk
        finally:
            self._stderr_done.set()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


def server_command(config: Path) -> list[str]:
    return [sys.executable, "-m", "acp_agent", "--config", str(config)]


@asynccontextmanager
async def spawn_server(
    *, config: Path = SNAPSHOT_CONFIG, env: dict[str, str], cwd: Path | None = None
) -> AsyncIterator[Wire]:
    """The real server on pipes; on exit, stdin is closed and the process awaited (killed if stuck)."""
    process = await anyio.open_process(
        server_command(config), env={**os.environ, "ACP_AGENT_LOG": "WARNING", **env}, cwd=cwd or ROOT
    )
    async with process, anyio.create_task_group() as tasks:
        wire = Wire(process)
        tasks.start_soon(wire._read_stdout)
        tasks.start_soon(wire._read_stderr)
        try:
            yield wire
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    try:
                        await wire.finish()
                    except TimeoutError:
                        process.kill()
                        await process.wait()
                        raise
