"""Normalize a run so that its snapshot is the same on every machine and every run (DESIGN §10).

Volatile values become stable placeholders: integer JSON-RPC ids are renumbered in order of
appearance (one numbering for responses to the client's requests, one for the agent's own requests),
session ids become `{{sessionId:N}}` and other UUIDs `{{uuid:N}}` by first appearance, the run's
temp cwd becomes `{{cwd}}` and its user configuration directory `{{config}}` inside any string,
and log times and `createdAt` become 0. Everything else is kept, key order included, so a
snapshot reads as what the editor saw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_agent.snapshot.frames import Frame, canonical_order, encode, is_agent_request, is_response
from acp_agent.snapshot.runner import RunResult

CWD = "{{cwd}}"
CONFIG = "{{config}}"
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """A copy of a JSON value with `change` applied to every string in it (keys excepted)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [map_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {key: map_strings(item, change) for key, item in value.items()}
    return value


class Placeholders:
    """The tables behind the placeholders, shared by a run's transcript and its logs so the same
    session is the same `{{sessionId:N}}` in both."""

    def __init__(self, cwd: str, config: str | None = None) -> None:
        self.cwd = cwd
        self.config = config
        self.sessions: dict[str, str] = {}
        self.uuids: dict[str, str] = {}

    def learn_session(self, session_id: Any) -> None:
        if isinstance(session_id, str) and session_id not in self.sessions:
            self.sessions[session_id] = f"{{{{sessionId:{len(self.sessions) + 1}}}}}"

    def text(self, text: str) -> str:
        text = text.replace(self.cwd, CWD)
        if self.config is not None:
            text = text.replace(self.config, CONFIG)
        for session_id, placeholder in self.sessions.items():
            text = text.replace(session_id, placeholder)
        return UUID.sub(self._uuid, text)

    def _uuid(self, match: re.Match[str]) -> str:
        return self.uuids.setdefault(match[0], f"{{{{uuid:{len(self.uuids) + 1}}}}}")

    def value(self, value: Any) -> Any:
        """`value` with every string in it (not the keys) normalized."""
        return map_strings(value, self.text)


class _Ids:
    """Renumbers integer JSON-RPC ids 1, 2, ... in order of first appearance. Other ids (null, or
    a string a scenario's raw line chose) are not volatile and stay, so a reader sees them echoed."""

    def __init__(self) -> None:
        self._table: dict[int, int] = {}

    def __call__(self, frame: dict[str, Any]) -> dict[str, Any]:
        request_id = frame.get("id")
        if type(request_id) is not int:
            return frame
        return {**frame, "id": self._table.setdefault(request_id, len(self._table) + 1)}


@dataclass(frozen=True)
class Normalized:
    transcript: list[str]
    """The stdout frames, one per line."""
    logs: dict[str, list[str]]
    """Each session log, one line per event, header first, keyed by route in route order."""
    answers: list[str] = field(default_factory=list)
    """The client's answers to the agent's requests (fs, terminals, permissions), by request id."""

    def text(self) -> str:
        """The snapshot document: the transcript, the client's answers to the agent's requests
        (when it made any), then each log under a heading naming its route."""
        parts = ["--- stdout ---", *self.transcript]
        if self.answers:
            parts += ["", "--- client answers ---", *self.answers]
        for route, lines in self.logs.items():
            parts += ["", f"--- log {route} ---", *lines]
        return "\n".join(parts) + "\n"


def normalize_run(result: RunResult) -> Normalized:
    frames = [_parse(line) for line in result.stdout]
    placeholders = Placeholders(str(result.cwd), None if result.config is None else str(result.config))
    # Session ids are numbered as they first appear: on the wire first, then in the logs (a child
    # session the client never saw).
    for frame in frames:
        for session_id in _session_ids(frame):
            placeholders.learn_session(session_id)
    for lines in result.logs.values():
        if lines and isinstance(lines[0], dict):
            placeholders.learn_session(lines[0].get("id"))
            placeholders.learn_session(lines[0].get("parentSession"))
    # Concurrent children's frames in one order, so a snapshot never depends on scheduling.
    requests = _Ids()
    transcript = normalize_frames(canonical_order(frames), placeholders, requests)
    logs = {route: [encode(line) for line in normalize_log(lines, placeholders)] for route, lines in result.logs.items()}
    return Normalized(transcript, logs, _answers(result.sent, frames, placeholders, requests))


def _answers(sent: Sequence[str], frames: Sequence[Frame], placeholders: Placeholders, requests: _Ids) -> list[str]:
    """The client's answers to the agent's requests, their ids numbered as the requests were,
    in that order (a client answers when it is ready, not in the order it was asked)."""
    asked = {frame["id"] for frame in frames if is_agent_request(frame) and type(frame["id"]) is int}
    answers = []
    for line in sent:
        frame = _parse(line)
        if is_response(frame) and isinstance(frame, dict) and type(frame.get("id")) is int and frame["id"] in asked:
            answers.append(requests(frame))
    answers.sort(key=lambda frame: frame["id"])
    return [encode(placeholders.value(frame)) for frame in answers]


def normalize_frames(frames: Sequence[Frame], placeholders: Placeholders, requests: _Ids | None = None) -> list[str]:
    """Frames as snapshot lines; `requests` numbers the agent's own request ids (shared with
    the client's answers to them)."""
    responses, requests = _Ids(), requests or _Ids()
    out = []
    for frame in frames:
        if isinstance(frame, _Unparsed):
            out.append(placeholders.text(frame.line))
            continue
        if is_response(frame):
            frame = [responses(item) for item in frame] if isinstance(frame, list) else responses(frame)
        elif is_agent_request(frame):
            frame = requests(frame)
        out.append(encode(placeholders.value(frame)))
    return out


def normalize_log(lines: Iterable[Any], placeholders: Placeholders) -> list[Any]:
    """A log with times zeroed (`createdAt` of the header, `time` of each event) and strings normalized."""
    out = []
    for line in lines:
        if isinstance(line, dict):
            line = {key: 0 if key in ("createdAt", "time") else value for key, value in line.items()}
        out.append(placeholders.value(line))
    return out


@dataclass(frozen=True)
class _Unparsed:
    """A stdout line that is not JSON (a server bug the run reports): kept as it is."""

    line: str


def _parse(line: str) -> Frame:
    try:
        return json.loads(line)
    except ValueError:
        return _Unparsed(line)


def _session_ids(value: Any) -> Iterable[Any]:
    """Every `sessionId` value in a frame, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "sessionId":
                yield item
            else:
                yield from _session_ids(item)
    elif isinstance(value, list):
        for item in value:
            yield from _session_ids(item)
