"""Drive a scenario's steps through a `Client`, one at a time, each waiting for its answer.

Each line a step writes is written after what the step waited for (the previous step's answer, the
chunk a cancel waits for, the tool calls of the children it waits for): the client keeps that with
the line, and the transcript places the line right there, whatever the arrival order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from acp_agent.acp.updates import META_KEY
from acp_agent.snapshot.client import Client
from acp_agent.snapshot.errors import ServerGone
from acp_agent.snapshot.frames import Frame, child_route, encode, is_agent_request, session_update
from acp_agent.snapshot.mcp_servers import Resolve
from acp_agent.snapshot.scenario import (
    AwaitTitle,
    AwaitToolCallOf,
    AwaitTrust,
    AwaitWokenTurn,
    CloseSession,
    ForkSession,
    Initialize,
    LoadSession,
    NewSession,
    NewSessionExpectError,
    Prompt,
    PromptAndCancel,
    PromptAndCancelAtToolCall,
    PromptAndCancelChild,
    PromptAndCancelWhen,
    PromptAndSteer,
    PromptExpectError,
    PromptWhileBusy,
    QueuedPrompt,
    Raw,
    SetConfigOption,
    SetMode,
    Steer,
    Step,
    ToChild,
    WriteFile,
)

PROTOCOL_VERSION = 1
NO_SESSION = "no session yet: a newSession step must come first"


class Driver:
    def __init__(
        self,
        client: Client,
        cwd: Path,
        timeout: float,
        mcp_servers: Resolve = lambda entries: [],
        sessions: Path | None = None,
    ) -> None:
        self.client = client
        self.cwd = cwd
        self.timeout = timeout
        self.mcp_servers = mcp_servers
        self.sessions = sessions
        """Where the server under test writes its session logs (to see its MCP servers settle)."""
        self.session_id: str | None = None

    async def run(self, steps: Sequence[Step]) -> list[str]:
        """Take the steps in order; a step that finds something wrong adds a failure and the run
        goes on, but a timeout or a vanished server ends the driving (nothing later could work)."""
        failures = []
        for number, step in enumerate(steps, 1):
            label = f"step {number} ({step.op})"
            try:
                with anyio.fail_after(self.timeout):
                    problem = await self.step(step)
            except TimeoutError:
                failures.append(f"{label}: no answer within {self.timeout:g} s")
                break
            except ServerGone as exc:
                failures.append(f"{label}: {exc}")
                break
            if problem is not None:
                failures.append(f"{label}: {problem}")
        return failures

    async def step(self, step: Step) -> str | None:
        """Take one step; what went wrong, or None."""
        client = self.client
        match step:
            case Initialize():
                hello = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": client.capabilities.dump()}
                return _expect_result(await client.call("initialize", hello))
            case NewSession():
                cwd = self.cwd if step.cwd is None else self.cwd / step.cwd
                cwd.mkdir(parents=True, exist_ok=True)
                opening: dict[str, Any] = {"cwd": str(cwd), "mcpServers": self.mcp_servers(step.mcp_servers)}
                if step.additional_directories:
                    roots = [str((self.cwd / root).resolve()) for root in step.additional_directories]
                    opening["additionalDirectories"] = roots
                response = await client.call("session/new", opening)
                if "result" in response:
                    self.session_id = response["result"]["sessionId"]
                    await self._mcp_settled(self.session_id, len(step.mcp_servers), 0)
                return _expect_result(response)
            case NewSessionExpectError():
                params: dict[str, Any] = {"cwd": str(self.cwd) if step.cwd is None else step.cwd, "mcpServers": []}
                if step.additional_directories is not None:
                    params["additionalDirectories"] = step.additional_directories
                return _expect_error(await client.call("session/new", params))
            case LoadSession():
                return await self._load_session(step)
            case ForkSession():
                return await self._fork_session(step)
            case Raw():
                return await self._raw(step)
            case WriteFile():
                target = self.cwd / step.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(step.text, encoding="utf-8")
                return None
        if self.session_id is None:
            return NO_SESSION
        match step:
            case Prompt():
                return _expect_result(await client.call("session/prompt", self._prompt(step.text, step.content)))
            case PromptExpectError():
                response = await client.call("session/prompt", self._prompt(step.text, step.content))
                return _expect_error(response, step.expect_error)
            case PromptAndCancel():
                ready = _shows(self.session_id, step.at)
                return await self._prompt_and_cancel(step.text, self.session_id, ready, f"any {step.at}")
            case PromptAndCancelWhen():
                ready = _new_child_in_tool_call(self.session_id)
                awaited = f"{step.children} child agent(s) showed a tool call"
                return await self._prompt_and_cancel(step.text, self.session_id, ready, awaited, needed=step.children)
            case PromptWhileBusy():
                return await self._prompt_while_busy(step, self.session_id)
            case PromptAndSteer():
                return await self._prompt_and_steer(step, self.session_id)
            case Steer():
                return await self._steer(step, self.session_id)
            case PromptAndCancelAtToolCall():
                ready = _shows_tool_call(self.session_id, step.tool_call_id)
                awaited = f"the tool call {step.tool_call_id!r} showed"
                return await self._prompt_and_cancel(step.text, self.session_id, ready, awaited, step.delay)
            case PromptAndCancelChild():
                return await self._prompt_and_cancel_child(step)
            case ToChild():
                return await self._to_child(step)
            case AwaitWokenTurn():
                await self._woken_turns(step.count, self.session_id)
                return None
            case AwaitTrust():
                await self._until_line(lambda frame: _trust_answered(frame, self.session_id))
                return None
            case AwaitTitle():
                titles = _shows(self.session_id, "session_info_update")
                await self._until_line(
                    lambda frame: titles(frame) and (session_update(frame) or {}).get("title") == step.title
                )
                return None
            case AwaitToolCallOf():
                # The next lines still follow the last answer: a child's frames move in the
                # canonical order (a background child's go last), the answer does not.
                waited_for = client.waited_for
                await self._until_line(lambda frame: _tool_call_of(frame, step.route))
                client.waited_for = waited_for
                return None
            case CloseSession():
                return _expect_result(await client.call("session/close", {"sessionId": self.session_id}))
            case SetMode():
                params = {"sessionId": self.session_id, "modeId": step.mode_id}
                return _expect(await client.call("session/set_mode", params), step.expect_error)
            case SetConfigOption():
                params = {"sessionId": self.session_id, "configId": step.config_id, "value": step.value}
                return _expect(await client.call("session/set_config_option", params), step.expect_error)
            case _:  # Cancel, a notification: there is no answer to wait for
                await client.notify("session/cancel", {"sessionId": self.session_id})
                return None

    async def _load_session(self, step: LoadSession) -> str | None:
        method = "session/load" if step.op == "loadSession" else "session/resume"
        cwd = str(self.cwd) if step.cwd is None else step.cwd
        session_id = step.session_id or self.session_id
        if session_id is None:
            return NO_SESSION
        params = {"sessionId": session_id, "cwd": cwd, "mcpServers": self.mcp_servers(step.mcp_servers)}
        before = len(self._log_lines(session_id))
        response = await self.client.call(method, params)
        if step.expect_error is not None:
            return _expect_error(response, step.expect_error)
        if "result" in response:
            self.session_id = session_id
            await self._mcp_settled(session_id, len(step.mcp_servers), before)
        return _expect_result(response)

    async def _fork_session(self, step: ForkSession) -> str | None:
        source = step.session_id or self.session_id
        if source is None:
            return NO_SESSION
        response = await self.client.call("session/fork", {"sessionId": source, "cwd": str(self.cwd)})
        if step.expect_error is not None:
            return _expect_error(response, step.expect_error)
        if "result" in response:
            self.session_id = response["result"]["sessionId"]
        return _expect_result(response)

    async def _mcp_settled(self, session_id: str, servers: int, skip: int) -> None:
        """Wait until the session's log says each of its `servers` MCP servers is up or failed
        (`mcp/status` after its first `skip` lines): the steps that follow find them settled, as a
        user who waits does, and the log's order does not depend on how fast they start."""
        while servers and len(_settled_servers(self._log_lines(session_id)[skip:])) < servers:
            await anyio.sleep(0.02)

    def _log_lines(self, session_id: str) -> list[str]:
        if self.sessions is None:
            return []
        try:
            return (self.sessions / session_id / "session.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            return []

    def _prompt(self, text: str, content: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        return {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}, *content]}

    async def _prompt_and_cancel(
        self,
        text: str,
        session_id: str,
        ready: Callable[[Frame], bool],
        awaited: str,
        delay: float = 0,
        needed: int = 1,
    ) -> str | None:
        """Send the prompt, cancel it `delay` seconds after `needed` notifications matched `ready`
        (the cancel is written after them), and expect it to answer `cancelled`; `awaited` says
        what `ready` waits for."""
        condition = self.client.watch(ready, needed)
        pending = await self.client.request("session/prompt", self._prompt(text))
        await _first(condition.done, pending.done)
        if not condition.is_set():
            return f"answered before {awaited}: {encode(await self.client.settled(pending))[:200]}"
        await anyio.sleep(delay)
        await self.client.notify("session/cancel", {"sessionId": session_id}, after=tuple(condition.lines))
        response = await self.client.settled(pending)
        if response.get("result") != {"stopReason": "cancelled"}:
            return f'expected the result {{"stopReason":"cancelled"}}, got {encode(response)[:200]}'
        return None

    async def _prompt_and_cancel_child(self, step: PromptAndCancelChild) -> str | None:
        child: list[str] = []
        shown = self.client.watch(_child_shows_tool_call(step.title, child))
        pending = await self.client.request("session/prompt", self._prompt(step.text))
        await _first(shown.done, pending.done)
        if not shown.is_set():
            answer = encode(await self.client.settled(pending))[:200]
            return f"answered before the child {step.title!r} showed a tool call: {answer}"
        await self.client.notify("session/cancel", {"sessionId": child[0]}, after=tuple(shown.lines))
        response = await self.client.settled(pending)
        if response.get("result") != {"stopReason": step.stop_reason}:
            return f"expected the stop reason {step.stop_reason!r}, got {encode(response)[:200]}"
        return None

    async def _woken_turns(self, count: int, session_id: str) -> None:
        """Wait until `count` woken turns of the session have ended (see `AwaitWokenTurn`)."""
        await self._until_line(lambda frame: _woken_turn_ended(frame, session_id), count)

    async def _until_line(self, matches: Callable[[Frame], bool], count: int = 1) -> None:
        """Wait until `count` stdout lines since the run's start match; the next lines are
        written after the `count`-th."""
        while len(found := [i for i, line in enumerate(self.client.stdout) if matches(_parsed(line))]) < count:
            await anyio.sleep(0.02)
        self.client.waited_for = (found[count - 1],)

    async def _to_child(self, step: ToChild) -> str | None:
        child = next((found for line in self.client.stdout if (found := _announced(line, step.title))), None)
        if child is None:
            return f"no child session was announced with the title {step.title!r}"
        params = {**step.params, "sessionId": child}
        if step.method == "session/cancel":
            await self.client.notify(step.method, params)
            return None
        return _expect(await self.client.call(step.method, params), step.expect_error)

    async def _prompt_while_busy(self, step: PromptWhileBusy, session_id: str) -> str | None:
        streaming = self.client.watch(_shows(session_id))
        prompts = [await self.client.request("session/prompt", self._prompt(step.text))]
        await _first(streaming.done, prompts[0].done)
        if not streaming.is_set():
            return f"answered before any agent_message_chunk: {encode(await self.client.settled(prompts[0]))[:200]}"
        lines = []
        for item in step.then:
            if isinstance(item, QueuedPrompt):
                line, pending = self.client.new_request("session/prompt", self._prompt(item.prompt))
                prompts.append(pending)
            else:
                line = encode({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}})
            lines.append(line)
        await self.client.write(*lines, after=tuple(streaming.lines))
        await self.client.settled(*prompts)
        for number, (pending, expected) in enumerate(zip(prompts, step.stop_reasons, strict=True), 1):
            response = await pending.wait()
            if response.get("result") != {"stopReason": expected}:
                return f"prompt {number}: expected the stop reason {expected!r}, got {encode(response)[:200]}"
        return None

    async def _prompt_and_steer(self, step: PromptAndSteer, session_id: str) -> str | None:
        line, steering = self.client.new_request("_session/steering", self._steering(step.steer, session_id))
        self.client.before_permission_answer = [line]
        response = await self.client.call("session/prompt", self._prompt(step.text))
        if self.client.before_permission_answer:
            self.client.before_permission_answer = []
            return f"answered before any permission request: {encode(response)[:200]}"
        steered = await steering.wait()
        if (steered.get("result") or {}).get("outcome") != "injected":
            return f'expected the steering outcome "injected", got {encode(steered)[:200]}'
        return _expect_result(response)

    async def _steer(self, step: Steer, session_id: str) -> str | None:
        params = self._steering(step.text, session_id)
        if step.idle_behavior is not None:
            params["idleBehavior"] = step.idle_behavior
        ended = sum(_woken_turn_ended(_parsed(line), session_id) for line in self.client.stdout)
        response = await self.client.call("_session/steering", params)
        if (response.get("result") or {}).get("outcome") != step.outcome:
            return f"expected the steering outcome {step.outcome!r}, got {encode(response)[:200]}"
        if step.outcome == "startedNewTurn":  # no prompt answers the turn it started: its end marker
            await self._woken_turns(ended + 1, session_id)
        return None

    @staticmethod
    def _steering(text: str, session_id: str) -> dict[str, Any]:
        return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}

    async def _raw(self, step: Raw) -> str | None:
        line = step.line * step.repeat
        await self.client.write(line)
        if _is_notification(line):
            return None
        response = await self.client.unclaimed()
        for item in response if isinstance(response, list) else [response]:
            problem = _expect_result(item) if step.expect_error is None else _expect_error(item, step.expect_error)
            if problem is not None:
                return problem
        return None


def _shows(session_id: str, kind: str = "agent_message_chunk") -> Callable[[Frame], bool]:
    """Whether a notification is an update of `kind` on the session (by default one that streams
    the agent's message text), or the agent's request of the method `kind` on it."""

    def ready(frame: Frame) -> bool:
        if is_agent_request(frame) and frame["method"] == kind:
            params = frame.get("params")
            return isinstance(params, dict) and params.get("sessionId") == session_id
        update = session_update(frame)
        return (
            update is not None
            and frame["params"].get("sessionId") == session_id
            and update.get("sessionUpdate") == kind
        )

    return ready


def _trust_answered(frame: Frame, session_id: str | None) -> bool:
    """Whether a frame ends the session's trust question (its card `completed` or `failed`)."""
    update = session_update(frame)
    return (
        update is not None
        and frame["params"].get("sessionId") == session_id
        and str(update.get("toolCallId", "")).startswith("trust-")
        and update.get("status") in ("completed", "failed")
    )


def _tool_call_of(frame: Frame, route: str) -> bool:
    """Whether a frame shows a `tool_call` of the agent of `route`."""
    update = session_update(frame)
    return update is not None and update.get("sessionUpdate") == "tool_call" and child_route(frame) == route


def _woken_turn_ended(frame: Frame, session_id: str) -> bool:
    """Whether a frame ends a turn of the session that no prompt started."""
    update = session_update(frame)
    return (
        update is not None
        and frame["params"].get("sessionId") == session_id
        and update.get("sessionUpdate") == "session_info_update"
        and ((update.get("_meta") or {}).get(META_KEY) or {}).get("turn") == "ended"
    )


def _settled_servers(lines: list[str]) -> set[str]:
    """The MCP servers an `mcp/status` line among `lines` says are up or failed."""
    events = map(_parsed, lines)
    return {
        event["data"]["server"]
        for event in events
        if event.get("type") == "mcp/status" and event.get("data", {}).get("state") in ("ready", "failed")
    }


def _parsed(line: str) -> Frame:
    """A stdout line as a frame ({} for one that is not a JSON object)."""
    try:
        frame = json.loads(line)
    except ValueError:
        return {}
    return frame if isinstance(frame, dict) else {}


def _shows_tool_call(session_id: str, tool_call_id: str) -> Callable[[Frame], bool]:
    """Whether a notification is the `tool_call` of that id on the session."""

    def ready(frame: Frame) -> bool:
        update = session_update(frame)
        return (
            update is not None
            and frame["params"].get("sessionId") == session_id
            and update.get("sessionUpdate") == "tool_call"
            and update.get("toolCallId") == tool_call_id
        )

    return ready


def _new_child_in_tool_call(session_id: str) -> Callable[[Frame], bool]:
    """Whether a notification is the first `tool_call` a child agent shows on the session, or on
    a child session announced from it (stateful: it sees every notification, in order)."""
    routes: set[str] = set()
    shown_on = {session_id}
    """The session and the child sessions announced on it (or on one of them)."""

    def ready(frame: Frame) -> bool:
        update = session_update(frame)
        route = child_route(frame)
        if update is None or frame["params"].get("sessionId") not in shown_on:
            return False
        if update.get("sessionUpdate") == "subagent_update":
            shown_on.add(str(update.get("sessionId")))
        if route is None or route in routes or update.get("sessionUpdate") != "tool_call":
            return False
        routes.add(route)
        return True

    return ready


def _announced(line: str, title: str) -> str | None:
    """The child session id a stdout line announces with that title, if it does."""
    update = session_update(_parsed(line))
    if update is None or update.get("sessionUpdate") != "subagent_update" or update.get("title") != title:
        return None
    return str(update.get("sessionId"))


def _child_shows_tool_call(title: str, child: list[str]) -> Callable[[Frame], bool]:
    """Whether the child announced with `title` has shown a `tool_call` on its session; its
    session id goes into `child` once announced (stateful: it sees every notification, in order)."""

    def ready(frame: Frame) -> bool:
        update = session_update(frame)
        if update is None:
            return False
        if not child and update.get("sessionUpdate") == "subagent_update" and update.get("title") == title:
            child.append(str(update.get("sessionId")))
        return (
            bool(child) and frame["params"].get("sessionId") == child[0] and update.get("sessionUpdate") == "tool_call"
        )

    return ready


def _is_notification(line: str) -> bool:
    """Whether the server must not answer the line: a request without an id (or a batch of them)."""
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    items = obj if isinstance(obj, list) and obj else [obj]
    return all(isinstance(item, dict) and "method" in item and "id" not in item for item in items)


def _expect(response: dict[str, Any], error: int | None) -> str | None:
    """A result, or (`error` given) an error of that code."""
    return _expect_result(response) if error is None else _expect_error(response, error)


def _expect_result(response: dict[str, Any]) -> str | None:
    if "error" in response:
        error = response["error"] or {}
        return f"unexpected error {error.get('code')}: {error.get('message')}"
    return None


def _expect_error(response: dict[str, Any], code: int | None = None) -> str | None:
    if "error" not in response:
        return f"expected an error, got the result {encode(response.get('result'))[:200]}"
    actual = (response["error"] or {}).get("code")
    if code is not None and actual != code:
        return f"expected error {code}, got error {actual}: {(response['error'] or {}).get('message')}"
    return None


async def _first(*events: anyio.Event) -> None:
    """Return as soon as one of the events is set."""
    async with anyio.create_task_group() as tasks:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tasks.cancel_scope.cancel()

        for event in events:
            tasks.start_soon(wait, event)
