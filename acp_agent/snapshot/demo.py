"""`acp-agent demo`: replay a bundled scenario through the real server and print it readably.

Keyless and offline: the model's side comes from the scenario's recorded session logs, while
everything else (the agent loop, two helpers running at once, the bash tool reading a scratch copy
of the workspace, a forked helper, the ACP wire) is the real thing.

The print is a tree per prompt: the parent's thoughts and messages, its tool calls, and under each
delegating call the child's own tool calls (nested by the `_meta.acpAgent.parentToolCallId` they
carry on the wire) and the result the parent got; then the stop reason.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio

from acp_agent.snapshot.frames import child_route, is_response, parent_tool_call, session_update
from acp_agent.snapshot.runner import RunResult, packaged, run_scenario

SCENARIO = "delegation"
DIM, RESET = "\x1b[2m", "\x1b[0m"
BRANCH, LAST = "  │ ", "  └ "
"""How a delegating call's nested lines and its result line start (below the call's own indent)."""


def demo_dir() -> Path:
    return packaged("demo") / SCENARIO


def run_demo(out: TextIO | None = None) -> int:
    out = out or sys.stdout
    with tempfile.TemporaryDirectory(prefix="acp-agent-demo-") as workdir:
        result = anyio.run(run_scenario, demo_dir(), Path(workdir))
    print(f"acp-agent demo: the bundled scenario {SCENARIO!r}, replayed through the real server\n", file=out)
    Transcript(out, color=out.isatty()).show(result)
    for failure in result.failures:
        print(f"failure: {failure}", file=sys.stderr)
    return 1 if result.failures else 0


@dataclass
class Call:
    """A tool call as the wire showed it, with the calls of the child agent it started."""

    wire_id: str
    title: str
    status: str
    result: list[str] = field(default_factory=list)
    children: list[Call] = field(default_factory=list)


@dataclass
class Text:
    kind: str
    """`agent_thought_chunk` or `agent_message_chunk`."""
    pieces: list[str]


@dataclass
class Transcript:
    """Prints each prompt, then the tree of what the agent (and its children) did, then how it ended."""

    out: TextIO
    color: bool
    _items: list[Text | Call] = field(default_factory=list)
    _calls: dict[str, Call] = field(default_factory=dict)

    def show(self, result: RunResult) -> None:
        prompts = _prompts(result.sent)
        names, delegations = _calls_in_logs(result.logs)
        for line in result.stdout:
            frame = json.loads(line)
            update = session_update(frame)
            if update is not None:
                self._update(frame, update)
            elif is_response(frame) and frame.get("id") in prompts:
                print(f"> {prompts[frame['id']]}\n", file=self.out)
                for item in self._items:
                    lines = self._text(item) if isinstance(item, Text) else _render(item, "  ", names, delegations)
                    for text in lines:
                        print(text, file=self.out)
                print(f"  {_outcome(frame)}\n", file=self.out)
                self._items, self._calls = [], {}

    def _update(self, frame: dict[str, Any], update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind in ("agent_thought_chunk", "agent_message_chunk"):
            text = (update.get("content") or {}).get("text", "")
            last = self._items[-1] if self._items else None
            if isinstance(last, Text) and last.kind == kind:
                last.pieces.append(text)
            else:
                self._items.append(Text(kind, [text]))
        elif kind == "tool_call":
            call = Call(update["toolCallId"], update.get("title", ""), update.get("status", ""))
            self._calls[call.wire_id] = call
            # A child's call goes under the call that started the child (a stray one, at the top).
            parent = self._calls.get(parent_tool_call(frame) or "") if child_route(frame) is not None else None
            (parent.children if parent is not None else self._items).append(call)
        elif kind == "tool_call_update" and update.get("toolCallId") in self._calls:
            call = self._calls[update["toolCallId"]]
            call.status = update.get("status") or call.status
            for item in update.get("content") or []:
                call.result += (item.get("content") or {}).get("text", "").splitlines()

    def _text(self, item: Text) -> list[str]:
        text = "".join(item.pieces)
        if item.kind == "agent_thought_chunk":
            line = f"  thinking: {text}"
            return [f"{DIM}{line}{RESET}" if self.color else line]
        return [f"  agent: {text}"]


def _render(call: Call, indent: str, names: dict[str, str], delegations: set[str]) -> list[str]:
    """A call's lines: a delegating call as a branch (its child's calls, then the result the
    parent got), any other call as one line with its output below."""
    label = f"{indent}{names.get(call.wire_id, 'tool')} {call.wire_id.rsplit('/', 1)[-1]}: {call.title}"
    if call.wire_id not in delegations and not call.children:
        return [f"{label} [{call.status}]", *(f"{indent}    {line}" for line in call.result)]
    lines = [label]
    for child in call.children:
        lines += _render(child, indent + BRANCH, names, delegations)
    first, *rest = call.result or [""]
    lines.append(f"{indent}{LAST}{call.status}: {first}".rstrip())
    return lines + [f"{indent}{' ' * len(LAST)}{line}" for line in rest]


def _calls_in_logs(logs: dict[str, list[Any]]) -> tuple[dict[str, str], set[str]]:
    """From the session logs: each tool call's name by its wire id (a child's ids are prefixed
    with its route), and the wire ids of the calls that started a child agent."""
    headers = {route: lines[0] for route, lines in logs.items() if lines and isinstance(lines[0], dict)}
    routes_by_session = {header.get("id"): route for route, header in headers.items()}

    def wire_id(route: str, call_id: str) -> str:
        return call_id if not headers[route].get("parentSession") else f"{route}/{call_id}"

    names = {
        wire_id(route, event["data"]["callId"]): event["data"]["name"]
        for route, lines in logs.items()
        if route in headers
        for event in lines[1:]
        if isinstance(event, dict) and event.get("type") == "tool/call"
    }
    delegations = {
        wire_id(routes_by_session[header["parentSession"]], header["spawnCallId"])
        for header in headers.values()
        if header.get("parentSession") in routes_by_session and header.get("spawnCallId")
    }
    return names, delegations


def _prompts(sent: list[str]) -> dict[Any, str]:
    """The text of each prompt the client sent, by request id."""
    prompts = {}
    for line in sent:
        frame = json.loads(line)
        if frame.get("method") == "session/prompt":
            prompts[frame["id"]] = " ".join(block.get("text", "") for block in frame["params"]["prompt"])
    return prompts


def _outcome(response: dict[str, Any]) -> str:
    if "error" in response:
        return f"error: {response['error'].get('message')}"
    return f"stop reason: {response['result'].get('stopReason')}"
