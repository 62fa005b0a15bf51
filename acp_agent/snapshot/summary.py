"""The tree view of a run (`acp-agent demo` prints it; each snapshot starts with it).

Read from the interleaved frames (`transcript.interleave`), so it shows what an editor's user saw,
in the order the snapshot shows it: each prompt (one sent to a child session says so), then the
parent's thoughts and messages, each tool call (its name from the session logs, and what the user
answered when asked, or that the agent withdrew the question), under each delegating call the
child's own tool calls (nested by the `_meta.acpAgent.parentToolCallId` they carry on the wire; a
child session's frames, thoughts and messages too, by the delegating call its log's header names)
and, last, `└ <status>: <the result the parent got>`; the session's cost so far where a
`usage_update` carries one; a steering message and its outcome; where the client cancelled
(between prompts, a line of its own); then the stop reason.
With `requests`, every other request the client sent gets one line with its outcome (what a session
load replayed below it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_agent.session.routes import process_base, route_under
from acp_agent.snapshot.frames import (
    CANCEL_REQUEST,
    FINAL_STATUSES,
    Frame,
    child_route,
    encode,
    is_agent_request,
    is_response,
    parent_tool_call,
    session_update,
)
from acp_agent.snapshot.transcript import CLIENT, Line, Unparsed

DIM, RESET = "\x1b[2m", "\x1b[0m"
BRANCH, LAST = "  │ ", "  └ "
"""How a delegating call's nested lines and its result line start (below the call's own indent)."""
CANCEL = "  (the client cancels)"
CANCEL_CHILD = "  (the client cancels a child session that has ended)"
"""Either cancel line, under the prompt it came during; between prompts it stands alone, unindented."""
LEFT_OVER = "after the last answer:"
UNPROMPTED = {
    "subagent": "(a background agent's notice starts a turn)",
    "steer": "(the steering message starts a turn)",
}
"""Where a turn no prompt started begins, by what started it; its `stop reason:` line ends it."""
BACKGROUND = "in the background"
BACKGROUND_RESULT = "what it did after the call answered"
"""How the summary closes a background child's frames, put after the session's own."""
STEERING = "_session/steering"
"""A message for the running turn: shown under the prompt it came during, else a line of its own."""
STRAY = 60
"""How much of a garbage line the summary quotes."""
TEXTS = {"agent_thought_chunk": "thinking", "agent_message_chunk": "agent", "user_message_chunk": "user"}
"""The chunks shown, and how their lines start."""


@dataclass
class Call:
    """A tool call as the wire showed it, with the calls of the child agent it started."""

    wire_id: str
    title: str
    status: str
    result: list[str] = field(default_factory=list)
    children: list[Call | Text | str] = field(default_factory=list)
    """The calls of the child it started, and (a child session's) its thoughts and messages, and
    where the client cancelled it."""
    asked: str | None = None
    """What the user answered when asked for permission (an option id, or `cancelled`), or
    `withdrawn`: the agent took its question (or its permission request) back unanswered."""
    kind: str = "tool"
    """What the line calls it when the logs name no tool for it (a compaction's is `compaction`)."""


@dataclass
class Text:
    kind: str
    """A key of `TEXTS`."""
    pieces: list[str]


@dataclass
class Tree:
    logs: Mapping[str, Sequence[Any]]
    color: bool = False
    """Dim the thoughts (for a terminal)."""
    requests: bool = True
    """Show the client's requests other than prompts too (one line each)."""
    _items: list[Text | Call | str] = field(default_factory=list)
    _calls: dict[str, Call] = field(default_factory=dict)
    """By `_key` (a child session's call ids prefixed with its route, as on a top-level session)."""
    _sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The client's requests, by encoded id."""
    _asked: dict[str, Call] = field(default_factory=dict)
    _seen: dict[str, Call] = field(default_factory=dict)
    """Every call so far, by `_key`: a background child's frames come after its call was shown."""
    """The calls of the agent's permission requests, by encoded id."""
    _stray: list[str] = field(default_factory=list)
    """The client's lines that are neither requests nor answers (a scenario's garbage), quoted."""
    _headers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The logs' headers by session id (a child session's names its parent and delegating call)."""
    _prompting: set[str] = field(default_factory=set)
    """The encoded ids of the prompts not answered yet."""

    def render(self, lines: Sequence[Line]) -> list[str]:
        names, delegations = _calls_in_logs(self.logs)
        self._headers = {
            log[0]["id"]: log[0] for log in self.logs.values() if log and isinstance(log[0], dict) and "id" in log[0]
        }
        out: list[str] = []
        for line in lines:
            frame: Frame = line.frame
            if line.direction == CLIENT:
                self._client(frame, out)
            elif is_response(frame):
                for response in frame if isinstance(frame, list) else [frame]:
                    block = self._answered(response, names, delegations)
                    if block[:1] == [""] and not (out and out[-1]):  # one blank line between blocks
                        block = block[1:]
                    out += block
            elif (update := session_update(frame)) is not None and (woken := _woken(update)) is not None:
                items = self._flush(names, delegations)
                match woken:
                    case ("started", trigger):
                        start = UNPROMPTED.get(trigger, f"(a turn starts: {trigger})")
                        out += [*items, *([""] if items or (out and out[-1]) else []), start, ""]
                    case (_, stop):
                        out += [*items, f"  stop reason: {stop}", ""]
            elif update is not None:
                self._update(frame, update)
            elif is_agent_request(frame) and frame["method"] in ("session/request_permission", "elicitation/create"):
                params = frame.get("params") or {}
                call_id = (params.get("toolCall") or {}).get("toolCallId") or params.get("toolCallId")
                call = self._calls.get(self._key(str(params.get("sessionId")), str(call_id)))
                if call is not None:
                    self._asked[encode(frame["id"])] = call
            elif isinstance(frame, dict) and frame.get("method") == CANCEL_REQUEST:
                withdrawn = encode((frame.get("params") or {}).get("requestId"))
                if withdrawn in self._asked:
                    self._asked.pop(withdrawn).asked = "withdrawn"
        if self._items:  # shown after the last answer (a child whose delegating call never ended)
            out += [LEFT_OVER, *self._flush(names, delegations)]
        return out

    def _client(self, frame: Frame, out: list[str]) -> None:
        if isinstance(frame, dict) and "method" in frame and "id" in frame:
            self._sent[encode(frame["id"])] = frame
            if frame["method"] == "session/prompt":
                self._prompting.add(encode(frame["id"]))
        elif isinstance(frame, dict) and frame.get("method") == "session/cancel":
            session = str((frame.get("params") or {}).get("sessionId"))
            header = self._headers.get(session) or {}
            parent = header.get("parentSession")
            if parent is not None:
                call = self._calls.get(self._key(str(parent), str(header.get("spawnCallId"))))
                if call is not None:
                    call.children.append(CANCEL)  # one child session cancelled
                    return
            line = CANCEL if parent is None else CANCEL_CHILD
            if self._prompting:  # under the prompt it came during
                self._items.append(line)
            else:
                out.append(line.strip())
        elif isinstance(frame, dict) and "method" in frame:
            if self.requests:
                out.append(f"{frame['method']}: a notification, no answer")
        elif is_response(frame) and isinstance(frame, dict) and encode(frame.get("id")) in self._asked:
            outcome = (frame.get("result") or {}).get("outcome") or {}
            self._asked.pop(encode(frame["id"])).asked = outcome.get("optionId") or outcome.get("outcome")
        elif not is_response(frame):  # garbage the next unclaimed answer is for
            text = frame.line if isinstance(frame, Unparsed) else encode(frame)
            self._stray.append(repr(text if len(text) <= STRAY else text[:STRAY] + "…"))

    def _answered(self, response: dict[str, Any], names: dict[str, str], delegations: set[str]) -> list[str]:
        """The lines for a request the agent answered, with what it showed since the last answer."""
        request = self._sent.get(encode(response.get("id")), {})
        self._prompting.discard(encode(response.get("id")))
        if request.get("method") == STEERING:
            result = response.get("result")
            outcome = result.get("outcome") if isinstance(result, dict) else _outcome(response)
            line = f"  (the user steers: {_prompt_text(request['params'].get('prompt') or [])}) {outcome}"
            if self._prompting:  # under the prompt it came during, where the agent then was
                self._items.append(line)
                return []
            return [line.strip(), *self._flush(names, delegations)] if self.requests else []
        items = self._flush(names, delegations)
        if request.get("method") == "session/prompt":
            params = request["params"]
            session = str(params.get("sessionId"))
            to = (
                f"  (to the child session {session})"
                if (self._headers.get(session) or {}).get("parentSession") is not None
                else ""
            )
            return ["", f"> {_prompt_text(params['prompt'])}{to}", "", *items, f"  {_outcome(response)}", ""]
        if not self.requests:
            return []
        if not request:  # the answer to a line that is no request of ours: garbage, on purpose
            request = {
                "method": self._stray.pop(0)
                if self._stray
                else f"(a line answered with id {encode(response.get('id'))})"
            }
        return [f"{request['method']}: {_outcome(response)}", *items]

    def _flush(self, names: dict[str, str], delegations: set[str]) -> list[str]:
        """The lines of what the agent showed since the last answer; forgotten once shown."""
        lines: list[str] = []
        for item in self._items:
            if isinstance(item, str):
                lines.append(item)
            else:
                lines += self._text(item) if isinstance(item, Text) else _render(item, "  ", names, delegations)
        self._items, self._calls = [], {}
        return lines

    def _update(self, frame: dict[str, Any], update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        session = str(frame["params"].get("sessionId"))
        # A child's activity goes under the call that started the child (a stray one, at the top).
        parent = self._started_by(frame, session)
        items = parent.children if parent is not None else self._items
        if kind in TEXTS:
            content = update.get("content") or {}
            text = content.get("text", "") if content.get("type", "text") == "text" else f" {_prompt_text([content])}"
            last = items[-1] if items else None
            if isinstance(last, Text) and last.kind == kind:
                last.pieces.append(text)
            else:
                items.append(Text(kind, [text]))
        elif kind == "tool_call":
            call = Call(self._key(session, update["toolCallId"]), update.get("title", ""), update.get("status", ""))
            if call.status in FINAL_STATUSES:  # a replayed call shows its result at once
                call.result = _content_lines(update)
            self._calls[call.wire_id] = self._seen[call.wire_id] = call
            items.append(call)
        elif kind == "compaction_update":  # shown as a call: its status, then its summary or error
            compaction_id = str(update.get("compactionId"))
            compaction = self._calls.get(compaction_id)
            if compaction is None:
                compaction = self._calls[compaction_id] = Call(
                    compaction_id, "the conversation so far", "", kind="compaction"
                )
                self._items.append(compaction)
            compaction.status = update.get("status") or compaction.status
            shown = [block.get("text", "") for block in update.get("summary") or []] + [update.get("error") or ""]
            if any(shown):
                compaction.result = "\n".join(text for text in shown if text).splitlines()
        elif kind == "usage_update" and isinstance(cost := update.get("cost"), dict):  # priced models only
            items.append(f"  cost so far: {cost.get('amount')} {cost.get('currency')}")
        elif kind == "tool_call_update" and self._key(session, str(update.get("toolCallId"))) in self._calls:
            call = self._calls[self._key(session, update["toolCallId"])]
            call.status = update.get("status") or call.status
            if "content" in update:  # an update's content replaces the card's
                call.result = _content_lines(update)

    def _started_by(self, frame: dict[str, Any], session: str) -> Call | None:
        """The call that started the child a frame comes from: the one its `_meta` names on the
        session (a child shown on its top-level session), else (a child session's frame) the call
        on its parent's session its log's header names; None for a top-level session's own."""
        if child_route(frame) is not None and (parent_call := parent_tool_call(frame)) is not None:
            return self._call(parent_call)
        header = self._headers.get(session)
        if header is None or header.get("parentSession") is None:
            return None
        return self._call(self._key(str(header["parentSession"]), str(header.get("spawnCallId"))))

    def _call(self, key: str) -> Call | None:
        """The call of `key` still being shown, or for a call shown already (its child ran on in
        the background) a new one that gathers the child's later frames."""
        if key in self._calls or key not in self._seen:
            return self._calls.get(key)
        shown = self._seen[key]
        call = self._calls[key] = Call(key, shown.title, BACKGROUND, [BACKGROUND_RESULT], kind=shown.kind)
        self._items.append(call)
        return call

    def _key(self, session: str, call_id: str) -> str:
        """A call's wire id as a top-level session shows it: a child session's, prefixed with
        its route (the logs' names and delegations are keyed so)."""
        header = self._headers.get(session)
        if header is None or header.get("parentSession") is None:
            return call_id
        return f"{header.get('route') or session}/{call_id}"

    def _text(self, item: Text) -> list[str]:
        lines = _lines(item)
        if item.kind == "agent_thought_chunk" and self.color:
            return [f"{DIM}{line}{RESET}" for line in lines]
        return lines


def _lines(item: Text) -> list[str]:
    """A text's lines, the first headed by its kind."""
    head = f"  {TEXTS[item.kind]}: "
    first, *rest = "".join(item.pieces).split("\n")
    return [head + first, *(f"{' ' * len(head)}{line}".rstrip() for line in rest)]


def _woken(update: dict[str, Any]) -> tuple[str, str] | None:
    """`("started", <trigger>)` or `("ended", <stop reason>)` for a `session_info_update` that
    opens or closes a turn no prompt started; else None."""
    meta = (update.get("_meta") or {}).get("acpAgent") if update.get("sessionUpdate") == "session_info_update" else None
    if not isinstance(meta, dict) or meta.get("turn") not in ("started", "ended"):
        return None
    if meta["turn"] == "started":
        return "started", str(meta.get("trigger"))
    return "ended", str(meta.get("stopReason"))


def _content_lines(update: dict[str, Any]) -> list[str]:
    """A card's content as lines: its text, and a line naming each terminal or diff."""
    lines: list[str] = []
    for item in update.get("content") or []:
        if item.get("type") == "terminal":
            lines.append(f"[terminal {item.get('terminalId')}]")
        elif item.get("type") == "diff":
            lines.append(f"[diff {item.get('path')}]")
        else:
            lines += (item.get("content") or {}).get("text", "").splitlines()
    return lines


def _prompt_text(blocks: Sequence[dict[str, Any]]) -> str:
    """A prompt's blocks on one line: the text as typed, attachments named."""
    words = []
    for block in blocks:
        kind = block.get("type", "text")
        if kind == "text":
            words.append(block.get("text", ""))
        elif kind == "resource":
            words.append(f"[resource {(block.get('resource') or {}).get('uri')}]")
        elif kind == "resource_link":
            words.append(f"[link {block.get('uri')}]")
        else:
            words.append(f"[{kind}]")
    return " ".join(words)


def _render(call: Call, indent: str, names: dict[str, str], delegations: set[str]) -> list[str]:
    """A call's lines: a delegating call as a branch (its child's calls, then the result the
    parent got), any other call as one line with its output below."""
    label = f"{indent}{names.get(call.wire_id, call.kind)} {call.wire_id.rsplit('/', 1)[-1]}: {call.title}"
    asked = "" if call.asked is None else f" (asked: {call.asked})"
    if call.wire_id not in delegations and not call.children:
        return [f"{label} [{call.status}]{asked}", *(f"{indent}    {line}".rstrip() for line in call.result)]
    lines = [label + asked]
    for child in call.children:
        if isinstance(child, str):
            lines.append(f"{indent}{BRANCH}{child.strip()}")
        elif isinstance(child, Text):
            lines += [f"{indent}{BRANCH}{line[2:]}" for line in _lines(child)]
        else:
            lines += _render(child, indent + BRANCH, names, delegations)
    first, *rest = call.result or [""]
    lines.append(f"{indent}{LAST}{call.status}: {first}".rstrip())
    return lines + [f"{indent}{' ' * len(LAST)}{line}".rstrip() for line in rest]


def _calls_in_logs(logs: Mapping[str, Sequence[Any]]) -> tuple[dict[str, str], set[str]]:
    """From the session logs: each tool call's name by its wire id (a child's ids are prefixed
    with its route), and the wire ids of the calls that started a child agent."""
    headers = {route: lines[0] for route, lines in logs.items() if lines and isinstance(lines[0], dict)}
    routes_by_session = {header.get("id"): route for route, header in headers.items()}

    def wire_id(route: str, call_id: str) -> str:
        if headers[route].get("parentSession"):
            return f"{route}/{call_id}"
        # A top-level session of an ACP child's process: its calls show as its stand-in's.
        return route_under(base, call_id) if (base := process_base(route)) else call_id

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


def _outcome(response: dict[str, Any]) -> str:
    if "error" in response:
        error = response["error"] if isinstance(response["error"], dict) else {}
        return f"error {error.get('code')}: {error.get('message')}"
    result = response.get("result")
    stop = result.get("stopReason") if isinstance(result, dict) else None
    return f"stop reason: {stop}" if stop else "ok"
