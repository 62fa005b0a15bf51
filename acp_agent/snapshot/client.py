"""The client end of an ACP connection to a server process, in raw JSON-RPC.

It keeps every stdout line as it came and every line it wrote, each with the stdout lines it was
written after (what its step waited for: the transcript places it there), matches responses to its
requests, hands the other
responses to whoever waits for an unclaimed one (raw steps), wakes watchers on notifications and
the agent's requests, and answers the agent's own requests: permissions and questions from the
scenario's answers (a question's form may be left open until the agent withdraws it), and what the scenario's
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
from acp_agent.snapshot.frames import CANCEL_REQUEST, Frame, encode, is_agent_request, is_response
from acp_agent.snapshot.scenario import ClientCapabilities

METHOD_NOT_FOUND = -32601
REQUEST_CANCELLED = -32800
LEFT_OPEN = "open"
"""An answer to `elicitation/create` that leaves the form open: the request is answered only when
the agent withdraws it (`$/cancel_request`), with the protocol's `-32800` Request Cancelled."""
CANCELLED_OUTCOME = {"outcome": {"outcome": "cancelled"}}


@dataclass(eq=False)
class Pending:
    """A request of ours waiting for its response (None when the server went away first)."""

    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] | None = None
    line: int | None = None
    """The index of the response among the stdout lines."""

    async def wait(self) -> dict[str, Any]:
        await self.done.wait()
        if self.response is None:
            raise ServerGone("the server closed its stdout before answering")
        return self.response


@dataclass(eq=False)
class Watch:
    """Set once `needed` notifications or agent requests from now on have matched its predicate."""

    predicate: Callable[[Frame], bool]
    needed: int
    done: anyio.Event = field(default_factory=anyio.Event)
    lines: list[int] = field(default_factory=list)
    """The indices among the stdout lines of the notifications that matched."""

    def is_set(self) -> bool:
        return self.done.is_set()


class Client:
    def __init__(
        self,
        stdin: ByteSendStream,
        permissions: Sequence[str],
        *,
        elicitations: Sequence[dict[str, Any] | str] = (),
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
        self._unclaimed_in, self._unclaimed = anyio.create_memory_object_stream[tuple[int, Frame]](math.inf)
        self._watchers: list[Watch] = []
        self._permissions = deque(permissions)
        self._elicitations = deque(elicitations)
        self._open_forms: set[int | str] = set()
        """The ids of the questions left open (`LEFT_OPEN`), until the agent withdraws them."""
        self.stdout: list[str] = []
        self.sent: list[str] = []
        self.sent_after: list[tuple[int, ...]] = []
        """For each line of `sent`, the stdout lines (indices) written after it was: what it waited for."""
        self.waited_for: tuple[int, ...] = ()
        """The stdout lines the driver last waited for: its next lines are written after them."""
        self.failures: list[str] = []
        self.before_permission_answer: list[str] = []
        """Lines written with the next answer to `session/request_permission`, just before it in
        the same write: the turn still waits for that answer when the server reads them."""

    async def write(self, *lines: str, after: tuple[int, ...] | None = None) -> None:
        """Write the lines in one go (one write: the server reads them together); `after`: the
        stdout lines they answer or waited for (default: `waited_for`)."""
        async with self._lock:
            try:
                await self._stdin.send("".join(line + "\n" for line in lines).encode())
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise ServerGone("the server stopped reading its stdin") from exc
        self.sent.extend(lines)
        self.sent_after.extend([self.waited_for if after is None else after] * len(lines))

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
        """Send a request and wait for its response (what the next line waits for)."""
        return await self.settled(await self.request(method, params))

    async def settled(self, *pending: Pending) -> dict[str, Any]:
        """Wait for the responses; the next lines are written after them. The last one's response."""
        responses = [await item.wait() for item in pending]
        self.waited_for = tuple(item.line for item in pending if item.line is not None)
        return responses[-1]

    async def notify(self, method: str, params: dict[str, Any], after: tuple[int, ...] | None = None) -> None:
        await self.write(encode({"jsonrpc": "2.0", "method": method, "params": params}), after=after)

    def watch(self, predicate: Callable[[Frame], bool], needed: int = 1) -> Watch:
        """A watch set once `needed` notifications or agent requests from now on have matched
        `predicate`."""
        watch = Watch(predicate, needed)
        self._watchers.append(watch)
        return watch

    async def unclaimed(self) -> Frame:
        """The next response that answers no request of ours (the answer to a raw line); the next
        lines are written after it."""
        try:
            line, frame = await self._unclaimed.receive()
        except anyio.EndOfStream:
            raise ServerGone("the server closed its stdout before answering") from None
        self.waited_for = (line,)
        return frame

    def leftovers(self) -> list[str]:
        """What the run left unexplained: responses nobody asked for, permission and elicitation
        answers unused."""
        found = []
        while True:
            try:
                _, frame = self._unclaimed.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
            found.append(f"a response to no request: {encode(frame)[:200]}")
        if self._permissions:
            found.append(f"permission answers left unused: {list(self._permissions)}")
        if self._elicitations:
            found.append(f"elicitation answers left unused: {list(self._elicitations)}")
        if self._open_forms:
            still_open = sorted(self._open_forms, key=str)
            found.append(f"questions left open that the agent never withdrew: requests {still_open}")
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
        line = len(self.stdout)
        self.stdout.append(text)
        try:
            frame = json.loads(text)
        except ValueError:
            self.failures.append(f"stdout line {len(self.stdout)} is not a JSON-RPC frame: {text[:200]!r}")
            return
        self._wake(frame, line)
        if is_agent_request(frame):
            if self._terminals is not None and str(frame["method"]).startswith("terminal/"):
                # An answer may wait for the command (wait_for_exit): the reading goes on meanwhile.
                self._terminals.tasks.start_soon(self._answer, frame, line)
            else:
                await self._answer(frame, line)
        elif is_response(frame):
            request_id = frame.get("id") if isinstance(frame, dict) else None
            # Only our own integer ids match (`type` is exact: `true` must not answer request 1).
            pending = self._pending.pop(request_id, None) if type(request_id) is int else None
            if pending is None:
                self._unclaimed_in.send_nowait((line, frame))
            else:
                pending.response, pending.line = frame, line
                pending.done.set()
        elif isinstance(frame, dict) and frame.get("method") == CANCEL_REQUEST:
            await self._withdrawn(frame, line)

    def _wake(self, frame: Frame, line: int) -> None:
        """Wake the watchers a notification or an agent's request matches."""
        if is_response(frame):
            return
        for watch in self._watchers:
            if watch.predicate(frame):
                watch.lines.append(line)
                if len(watch.lines) >= watch.needed:
                    watch.done.set()
        self._watchers = [watch for watch in self._watchers if not watch.is_set()]

    async def _withdrawn(self, frame: Frame, line: int) -> None:
        """`$/cancel_request` for a question left open: the form closes, its request answered
        `-32800` after the notification."""
        params = frame.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not isinstance(request_id, (int, str)) or request_id not in self._open_forms:
            return
        self._open_forms.remove(request_id)
        error = {"code": REQUEST_CANCELLED, "message": "Request cancelled"}
        try:
            await self.write(encode({"jsonrpc": "2.0", "id": request_id, "error": error}), after=(line,))
        except ServerGone:
            pass  # the server is going away; it will not read the answer

    async def _answer(self, request: dict[str, Any], line: int) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        method, params = request["method"], request.get("params")
        try:
            if method == "session/request_permission":
                reply["result"] = self._choose(params or {})
            elif method == "elicitation/create" and self.capabilities.elicitation is not None:
                answer = self._elicited(params or {})
                if answer == LEFT_OPEN:
                    self._open_forms.add(request["id"])
                    return
                reply["result"] = answer
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
        ahead: list[str] = []
        if method == "session/request_permission":
            ahead, self.before_permission_answer = self.before_permission_answer, []
        try:
            await self.write(*ahead, encode(reply), after=(line,))
        except ServerGone:
            pass  # the server is going away; it will not need the answer

    def _elicited(self, params: dict[str, Any]) -> dict[str, Any] | str:
        if not self._elicitations:
            self.failures.append(f"the agent asked {params.get('message')!r} and input.json has no answer left")
            return {"action": "cancel"}
        return self._elicitations.popleft()

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
