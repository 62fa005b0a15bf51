"""An ACP agent run as a child process: this server is its client, over its stdin and stdout.

One request at a time (the stand-in's turns run one after another): `request` writes the request,
then reads the child's frames until its answer, handing each `session/update` to the caller's
callback and answering the child's own requests on the way: `session/request_permission` through
the caller's `ask` (`cancelled` outside a prompt, or when the prompt is cancelled meanwhile:
nothing is ever approved on the user's behalf), the others through its `serve` (`fs/*`; -32601
outside a prompt, or for a method the caller does not serve). Nothing reads between requests: what the child writes
meanwhile waits in the pipe, so no task outlives a call. The child's stderr is the server's.

A child that exits, closes its stdout, writes a frame that is not JSON-RPC, or does not answer
`initialize` within its start-up time fails the request with `AcpChildError` (its message names
the child); `close` ends it: stdin closed (EOF), then SIGTERM, then SIGKILL to its process group,
each after a grace, and the process is reaped.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, NamedTuple

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from acp_agent.processes.registry import CommandGroup
from acp_agent.processes.spawn import open_leader
from acp_agent.subagents import texts
from acp_agent.subagents.errors import SubagentError

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 64 * 1024 * 1024
CANCEL_GRACE = 5.0
"""Seconds a cancelled prompt's answer may take before the child is ended."""
EOF_GRACE = 2.0
TERM_GRACE = 2.0
PROTOCOL_VERSION = 1

UpdateSink = Callable[[dict[str, Any]], None]
Ask = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Asks the user a `session/request_permission` of the child; the result to answer it with."""
CANCELLED: dict[str, Any] = {"outcome": {"outcome": "cancelled"}}


class Refused(Exception):
    """How a request of the child is answered when it cannot be served: a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


Serve = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Serves another request of the child (`fs/*`): its result, or `Refused`."""


class Handlers(NamedTuple):
    """What the caller does with the child's traffic while a prompt runs."""

    updates: UpdateSink
    ask: Ask
    serve: Serve


class AcpChildError(SubagentError):
    """The child process could not start, or broke the protocol, or ended mid-request."""


class AcpChild:
    """A started child process and the JSON-RPC conversation with it."""

    def __init__(self, title: str, process: Process, group: CommandGroup | None) -> None:
        self.title = title
        self._process = process
        self._group = group
        assert process.stdout is not None and process.stdin is not None  # opened with pipes
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._next_id = 0
        self._broken: str | None = None
        self._closed = False

    @classmethod
    async def start(
        cls, title: str, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], group: CommandGroup | None
    ) -> AcpChild:
        try:
            process = await open_leader(
                argv,
                cwd=cwd,
                env=env,
                group=group,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,  # the server's stderr: its log
            )
        except OSError as exc:
            raise AcpChildError(texts.acp_not_started(title, str(exc))) from exc
        return cls(title, process, group)

    async def handshake(
        self, timeout: float, cwd: Path, mcp_servers: list[dict[str, Any]], additional: Sequence[Path] = ()
    ) -> str:
        """`initialize`, then `session/new` with the MCP servers of `mcp_servers` the child takes
        (stdio always; http and sse when its `mcpCapabilities` say so) and, when its
        `sessionCapabilities` advertise `additionalDirectories`, the `additional` roots beside
        `cwd`, within `timeout` seconds; the child's session id."""
        with anyio.move_on_after(timeout) as waited:
            initialized = await self.request(
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
                    "clientInfo": {"name": "acp-agent", "version": "subagent"},
                },
            )
            capabilities = _field(initialized, "agentCapabilities")
            mcp = _field(capabilities, "mcpCapabilities")
            taken = [server for server in mcp_servers if "type" not in server or mcp.get(server["type"]) is True]
            params: dict[str, Any] = {"cwd": str(cwd), "mcpServers": taken}
            sessions = _field(capabilities, "sessionCapabilities")
            if additional and isinstance(sessions.get("additionalDirectories"), dict):  # `{}`; null: not supported
                params["additionalDirectories"] = [str(path) for path in additional]
            answer = await self.request("session/new", params)
        if waited.cancelled_caught:
            raise AcpChildError(texts.acp_start_timeout(self.title, timeout))
        session_id = answer.get("sessionId") if isinstance(answer, dict) else None
        if not isinstance(session_id, str):
            raise AcpChildError(texts.acp_garbage(self.title, json.dumps(answer)[:200]))
        return session_id

    async def prompt(self, session_id: str, text: str, handlers: Handlers) -> str:
        """One `session/prompt`; its stop reason. Cancelled, it sends `session/cancel` and waits
        (shielded, `CANCEL_GRACE` at most) for the answer before the cancellation goes on."""
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        request_id = await self._send("session/prompt", params)
        try:
            answer = await self._answer(request_id, handlers)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancelled(request_id, session_id, handlers)
            raise
        reason = answer.get("stopReason") if isinstance(answer, dict) else None
        return reason if isinstance(reason, str) else "end_turn"

    async def request(self, method: str, params: Any) -> Any:
        return await self._answer(await self._send(method, params), None)

    def kill(self) -> None:
        """SIGKILL its process group (what is left of it when its owner goes); no error when gone.
        Once it was reaped nothing is sent: the group's number may belong to another process."""
        if self._process.returncode is not None:
            return
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)

    async def close(self) -> None:
        """End the child: EOF, SIGTERM, SIGKILL to its group, a grace apart; reap it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await self._stdin.aclose()
            for grace, sent in ((EOF_GRACE, signal.SIGTERM), (TERM_GRACE, signal.SIGKILL)):
                with anyio.move_on_after(grace):
                    await self._process.wait()
                    break
                with suppress(ProcessLookupError, PermissionError):
                    os.killpg(self._process.pid, sent)
            await self._process.wait()
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)  # what it left in its group
            await self._process.aclose()
            if self._group is not None:
                self._group.exited()

    # -- internals -------------------------------------------------------------------------------

    async def _cancelled(self, request_id: int, session_id: str, handlers: Handlers) -> None:
        with suppress(AcpChildError):
            await self._write({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}})
            with anyio.move_on_after(CANCEL_GRACE):
                await self._answer(request_id, handlers._replace(ask=_refuse, serve=not_served))
                return
        await self.close()  # it did not answer its cancelled prompt: it cannot be trusted with another

    async def _send(self, method: str, params: Any) -> int:
        self._next_id += 1
        await self._write({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    async def _write(self, frame: dict[str, Any]) -> None:
        self._check()
        try:
            await self._stdin.send(json.dumps(frame).encode() + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise await self._fail(texts.acp_exited(self.title, await self._exit_code())) from exc

    async def _answer(self, request_id: int, handlers: Handlers | None) -> Any:
        while True:
            frame = await self._read()
            if "method" in frame:
                await self._incoming(frame, handlers)
            elif frame.get("id") == request_id:
                if "error" in frame:
                    error = frame["error"]
                    message = error.get("message") if isinstance(error, dict) else None
                    raise AcpChildError(texts.acp_error(self.title, str(message or error)))
                return frame.get("result")
            # an answer to no request of ours: ignored, as JSON-RPC peers do

    async def _read(self) -> dict[str, Any]:
        self._check()
        try:
            line = await self._stdout.receive_until(b"\n", MAX_FRAME_BYTES)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise await self._fail(texts.acp_exited(self.title, await self._exit_code())) from None
        except anyio.DelimiterNotFound:
            raise await self._fail(texts.acp_garbage(self.title, "a line longer than 64 MiB")) from None
        try:
            frame = json.loads(line)
        except ValueError:
            frame = None
        if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
            raise await self._fail(texts.acp_garbage(self.title, line[:200].decode(errors="replace")))
        return frame

    async def _incoming(self, frame: dict[str, Any], handlers: Handlers | None) -> None:
        method, params = frame["method"], frame.get("params")
        if method == "session/update" and isinstance(params, dict) and isinstance(params.get("update"), dict):
            if handlers is not None:
                handlers.updates(params["update"])
            return
        if "id" not in frame:
            return  # a notification this client does not take
        asking = method == "session/request_permission"
        # What the child hears if nothing better comes (none to serve it; cancelled meanwhile:
        # a permission request is `cancelled`, as ACP says, anything else an error).
        reply: dict[str, Any] = (
            {"result": CANCELLED} if asking else {"error": {"code": -32601, "message": f"Method not found: {method}"}}
        )
        try:
            if handlers is not None and isinstance(params, dict):
                if asking:
                    reply = {"result": await handlers.ask(params)}
                else:
                    reply = {"result": await handlers.serve(method, params)}
        except Refused as exc:
            reply = {"error": {"code": exc.code, "message": exc.message}}
        finally:
            with anyio.CancelScope(shield=True):
                await self._write({"jsonrpc": "2.0", "id": frame["id"], **reply})

    def _check(self) -> None:
        if self._broken is not None:
            raise AcpChildError(self._broken)

    async def _fail(self, message: str) -> AcpChildError:
        """The child is unusable from now on: it is ended, and every later call fails the same way."""
        self._broken = message
        log.warning("%s", message)
        await self.close()
        return AcpChildError(message)

    async def _exit_code(self) -> int | None:
        with anyio.move_on_after(EOF_GRACE):
            return await self._process.wait()
        return None


async def _refuse(request: dict[str, Any]) -> dict[str, Any]:
    """A cancelled prompt's late permission requests: refused without asking."""
    return CANCELLED


async def not_served(method: str, params: dict[str, Any]) -> Any:
    """A method nobody serves: -32601."""
    raise Refused(-32601, f"Method not found: {method}")


def _field(value: Any, name: str) -> dict[str, Any]:
    """`value[name]` when both are JSON objects, else an empty one (a field an agent left out)."""
    found = value.get(name) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}
