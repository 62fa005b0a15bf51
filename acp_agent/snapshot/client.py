"""The client end of an ACP connection to a server process, in raw JSON-RPC.

It keeps every stdout line as it came, matches responses to its requests, hands the other
responses to whoever waits for an unclaimed one (raw steps), wakes watchers on notifications and
answers the agent's own requests: permissions from the scenario's answers, and what the scenario's
`clientCapabilities` advertise (`fs/*` from the run's cwd, `terminal/*` by running the command; a
request for a method it did not advertise is a failure). The official `acp` package is not used:
this ships in the product and must run without the test extras.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_agent.snapshot.client_fs import FileServer, RequestFailed
from acp_agent.snapshot.client_terminal import Terminals
from acp_agent.snapshot.errors import ServerGone
from acp_agent.snapshot.frames import Frame, encode, is_agent_request, is_response
from acp_agent.snapshot.scenario import ClientCapabilities

METHOD_NOT_FOUND = -32601
CANCELLED_OUTCOME = {"outcome": {"outcome": "cancelled"}}


@dataclass(eq=False)
class Pending:
    """A request of ours waiting for its response (None when the server went away first)."""

    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None

    async def wait(self) -> dict[str, Any]:
        await self.done.wait()
        if self.response is None:
            raise ServerGone("the server closed its stdout before answering")
        return self.response


class Client:
    def __init__(
        self,
        stdin: ByteSendStream,
        permissions: Sequence[str],
        *,
        capabilities: ClientCapabilities | None = None,
        files: FileServer | None = None,
        terminals: Terminals | None = None,
    ) -> None:
        self._stdin = stdin
        self.capabilities = capabilities or ClientCapabilities()
        """What `initialize` advertises, and which agent requests are served."""
        self._files = files
        self._terminals = terminals
        self._lock = anyio.Lock()  # one writer at a time: a step and an answer to the agent may overlap
        self._next_id = 0
        self._pending: dict[int, Pending] = {}
        self._unclaimed_in, self._unclaimed = anyio.create_memory_object_stream[Frame](math.inf)
        self._watchers: list[tuple[Callable[[Frame], bool], anyio.Event]] = []
        self._permissions = deque(permissions)
        self.stdout: list[str] = []
        self.sent: list[str] = []
        self.failures: list[str] = []

    async def write(self, *lines: str) -> None:
        """Write the lines in one go (one write: the server reads them together)."""
        async with self._lock:
            try:
                await self._stdin.send("".join(line + "\n" for line in lines).encode())
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise ServerGone("the server stopped reading its stdin") from exc
        self.sent.extend(lines)

    def new_request(self, method: str, params: dict[str, Any]) -> tuple[str, Pending]:
        """A request's line, to write, and the `Pending` its response will settle."""
        self._next_id += 1
        pending = self._pending[self._next_id] = Pending()
        return encode({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}), pending

    async def request(self, method: str, params: dict[str, Any]) -> Pending:
        """Send a request; await the returned `Pending` for its response."""
        line, pending = self.new_request(method, params)
        await self.write(line)
        return pending

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await (await self.request(method, params)).wait()

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.write(encode({"jsonrpc": "2.0", "method": method, "params": params}))

    def watch(self, predicate: Callable[[Frame], bool]) -> anyio.Event:
        """An event set by the first notification from now on that matches `predicate`."""
        event = anyio.Event()
        self._watchers.append((predicate, event))
        return event

    async def unclaimed(self) -> Frame:
        """The next response that answers no request of ours (the answer to a raw line)."""
        try:
            return await self._unclaimed.receive()
        except anyio.EndOfStream:
            raise ServerGone("the server closed its stdout before answering") from None

    def leftovers(self) -> list[str]:
        """What the run left unexplained: responses nobody asked for, permission answers unused."""
        found = []
        while True:
            try:
                frame = self._unclaimed.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
            found.append(f"a response to no request: {encode(frame)[:200]}")
        if self._permissions:
            found.append(f"permission answers left unused: {list(self._permissions)}")
        return found

    async def read(self, stdout: ByteReceiveStream) -> None:
        """Read stdout to its end; a torn last line (no newline) is kept as it is."""
        tail = b""
        async for chunk in stdout:
            *lines, tail = (tail + chunk).split(b"\n")
            for line in lines:
                await self._receive(line)
        if tail:
            await self._receive(tail)
        for pending in self._pending.values():
            pending.done.set()  # nobody will answer now
        self._unclaimed_in.close()

    async def _receive(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace")
        self.stdout.append(text)
        try:
            frame = json.loads(text)
        except ValueError:
            self.failures.append(f"stdout line {len(self.stdout)} is not a JSON-RPC frame: {text[:200]!r}")
            return
        if is_agent_request(frame):
            if self._terminals is not None and str(frame["method"]).startswith("terminal/"):
                # An answer may wait for the command (wait_for_exit): the reading goes on meanwhile.
                self._terminals.tasks.start_soon(self._answer, frame)
            else:
                await self._answer(frame)
        elif is_response(frame):
            request_id = frame.get("id") if isinstance(frame, dict) else None
            # Only our own integer ids match (`type` is exact: `true` must not answer request 1).
            pending = self._pending.pop(request_id, None) if type(request_id) is int else None
            if pending is None:
                self._unclaimed_in.send_nowait(frame)
            else:
                pending.response = frame
                pending.done.set()
        else:
            for predicate, event in self._watchers:
                if predicate(frame):
                    event.set()
            self._watchers = [(p, e) for p, e in self._watchers if not e.is_set()]

    async def _answer(self, request: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        method, params = request["method"], request.get("params")
        try:
            if method == "session/request_permission":
                reply["result"] = self._choose(params or {})
            elif method == "fs/read_text_file" and self._files and self.capabilities.fs.read_text_file:
                reply["result"] = self._files.read(params)
            elif method == "fs/write_text_file" and self._files and self.capabilities.fs.write_text_file:
                reply["result"] = self._files.write(params)
            elif str(method).startswith("terminal/") and self._terminals and self.capabilities.terminal:
                reply["result"] = await self._terminals.handle(method, params)
            else:
                if str(method).startswith(("fs/", "terminal/")):
                    self.failures.append(f"the agent called {method}, which the client did not advertise")
                reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
        except RequestFailed as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        try:
            await self.write(encode(reply))
        except ServerGone:
            pass  # the server is going away; it will not need the answer

    def _choose(self, params: dict[str, Any]) -> dict[str, Any]:
        call = (params.get("toolCall") or {}).get("toolCallId")
        if not self._permissions:
            self.failures.append(f"the agent asked for permission (tool call {call}) and input.json has no answer left")
            return CANCELLED_OUTCOME
        kind = self._permissions.popleft()
        if kind == "cancelled":
            return CANCELLED_OUTCOME
        for option in params.get("options") or []:
            if kind in (option.get("optionId"), option.get("kind")):
                return {"outcome": {"outcome": "selected", "optionId": option.get("optionId")}}
        self.failures.append(f"the agent's permission request (tool call {call}) offers no option of kind {kind!r}")
        return CANCELLED_OUTCOME
