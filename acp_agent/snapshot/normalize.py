"""Normalize a run so that its snapshot is the same on every machine and every run (DESIGN §10).

The document is the run's summary (the tree view), its transcript (both directions, `<<` agent to
client and `>>` client to agent, placed by `transcript.interleave`), then each session log.
Volatile values become stable placeholders: integer JSON-RPC ids are renumbered in order of
appearance (one numbering for the client's requests and their answers, one for the agent's own
requests and the client's answers to them, each side's `$/cancel_request` naming its own request
by the new number), session ids become `{{sessionId:N}}` and other UUIDs
`{{uuid:N}}` by first appearance, the run's temp cwd becomes `{{cwd}}`, its user configuration
directory `{{config}}`, the scenario directory `{{scenario}}`, the harness's interpreter
`{{python}}`, the sandbox's launcher `{{launcher}}`, the directory the cwd is in `{{workdir}}`, a
session's private temporary directory `{{tmpdir:N}}`, a command's overflow file in it
`{{tmpdir:N}}/{{tmpfile:M}}` and a loopback port `{{port:N}}`, inside any
string, and log times, `createdAt` and an event's `durationMs` become 0. Everything else is kept,
key order included, so a snapshot reads as what the editor saw.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from acp_agent.sandbox.backends import LAUNCHER
from acp_agent.snapshot.frames import CANCEL_REQUEST, Frame, encode, is_agent_request, is_response
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.summary import Tree
from acp_agent.snapshot.transcript import AGENT, Line, Unparsed, interleave
from acp_agent.tools.scratch import PREFIX as SCRATCH_PREFIX

CWD = "{{cwd}}"
CONFIG = "{{config}}"
SCENARIO = "{{scenario}}"
PYTHON = "{{python}}"
LAUNCHER_PATH = "{{launcher}}"
WORKDIR = "{{workdir}}"
SCRATCH = re.compile(re.escape(os.path.join(tempfile.gettempdir(), SCRATCH_PREFIX)) + r"\w+")
SCRATCH_FILE = re.compile(r"(\{\{tmpdir:\d+\}\}/)(output-\w+\.txt)")
"""A file a command's output overflowed to, in a session's directory once that has its placeholder
(`tools/overflow.py` names it by `mkstemp`: new each run)."""
LOOPBACK_PORT = re.compile(r"(127\.0\.0\.1:)(\d+)")
"""A port the run's loopback servers (MCP over HTTP) were given: free ports, new each run."""
LONG_LINE, CUT = 2000, 100
"""A line that is not JSON and longer than LONG_LINE characters (a scenario's megabyte of garbage)
shows its first CUT characters and its length."""
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

    def __init__(self, cwd: str, config: str | None = None, scenario: str | None = None) -> None:
        self.paths = [(cwd, CWD)]
        """The run's own paths (the client's lines name them: the MCP servers it configures)."""
        for path, placeholder in (
            (config, CONFIG),
            (scenario, SCENARIO),
            (LAUNCHER, LAUNCHER_PATH),
            (sys.executable, PYTHON),
        ):
            if path:
                self.paths.append((path, placeholder))
        # Last: the directory the run's cwd is in (what a command writes beside the project),
        # unless that is the root, which every path starts with.
        if os.path.dirname(cwd) not in ("/", ""):
            self.paths.append((os.path.dirname(cwd), WORKDIR))
        self.sessions: dict[str, str] = {}
        self.uuids: dict[str, str] = {}
        self.ports: dict[str, str] = {}
        self.scratch: dict[str, str] = {}
        self.scratch_files: dict[str, str] = {}

    def learn_session(self, session_id: Any) -> None:
        if isinstance(session_id, str) and session_id not in self.sessions:
            self.sessions[session_id] = f"{{{{sessionId:{len(self.sessions) + 1}}}}}"

    def text(self, text: str) -> str:
        for path, placeholder in self.paths:
            text = text.replace(path, placeholder)
        for session_id, placeholder in self.sessions.items():
            text = text.replace(session_id, placeholder)
        text = SCRATCH_FILE.sub(self._scratch_file, SCRATCH.sub(self._scratch, text))
        text = LOOPBACK_PORT.sub(self._port, text)
        return UUID.sub(self._uuid, text)

    def _uuid(self, match: re.Match[str]) -> str:
        return self.uuids.setdefault(match[0], f"{{{{uuid:{len(self.uuids) + 1}}}}}")

    def _scratch(self, match: re.Match[str]) -> str:
        return self.scratch.setdefault(match[0], f"{{{{tmpdir:{len(self.scratch) + 1}}}}}")

    def _scratch_file(self, match: re.Match[str]) -> str:
        return match[1] + self.scratch_files.setdefault(match[2], f"{{{{tmpfile:{len(self.scratch_files) + 1}}}}}")

    def _port(self, match: re.Match[str]) -> str:
        return match[1] + self.ports.setdefault(match[2], f"{{{{port:{len(self.ports) + 1}}}}}")

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
        return {**frame, "id": self._number(request_id)}

    def withdrawn(self, frame: dict[str, Any]) -> dict[str, Any]:
        """A `$/cancel_request` naming one of these requests by its renumbered id."""
        params = frame.get("params")
        if not isinstance(params, dict) or type(params.get("requestId")) is not int:
            return frame
        return {**frame, "params": {**params, "requestId": self._number(params["requestId"])}}

    def _number(self, request_id: int) -> int:
        return self._table.setdefault(request_id, len(self._table) + 1)


@dataclass(frozen=True)
class Normalized:
    summary: list[str]
    """The tree view of the run (`summary.py`), from the normalized frames."""
    transcript: list[str]
    """Both directions, one frame per line: `<< ` before what the agent wrote, `>> ` before
    what the client wrote (placed as `transcript.interleave` places it)."""
    logs: dict[str, list[str]]
    """Each session log, one line per event, header first, keyed by route in route order."""

    def text(self) -> str:
        """The snapshot document: the summary, the transcript, then each log under a heading
        naming its route."""
        summary = list(self.summary)
        while summary and not summary[-1]:
            summary.pop()
        parts = ["--- summary ---", *summary, "", "--- transcript ---", *self.transcript]
        for route, lines in self.logs.items():
            parts += ["", f"--- log {route} ---", *lines]
        return "\n".join(parts) + "\n"


def normalize_run(result: RunResult) -> Normalized:
    lines = interleave(result)
    placeholders = Placeholders(
        str(result.cwd),
        None if result.config is None else str(result.config),
        None if result.scenario is None else str(result.scenario),
    )
    # Session ids are numbered as they first appear: on the agent's side of the transcript first,
    # then in the logs (a child session the client never saw). Not from the client's lines: a
    # session id a scenario made up (`no-such-session`) is no placeholder.
    for line in lines:
        for session_id in _session_ids(line.frame) if line.direction == AGENT else ():
            placeholders.learn_session(session_id)
    for log in result.logs.values():
        if log and isinstance(log[0], dict):
            placeholders.learn_session(log[0].get("id"))
            placeholders.learn_session(log[0].get("parentSession"))
    normalized = normalize_lines(lines, placeholders)
    logs = {route: normalize_log(log, placeholders) for route, log in result.logs.items()}
    return Normalized(
        summary=Tree(logs).render(normalized),
        transcript=[f"{line.direction} {_encode(line.frame)}" for line in normalized],
        logs={route: [encode(event) for event in log] for route, log in logs.items()},
    )


def normalize_lines(lines: Sequence[Line], placeholders: Placeholders) -> list[Line]:
    """The lines with placeholders and renumbered ids: the client's requests and the agent's
    answers share one numbering, the agent's requests and the client's answers another."""
    clients, agents = _Ids(), _Ids()
    out = []
    for line in lines:
        frame = line.frame
        if isinstance(frame, Unparsed):
            text = frame.line if len(frame.line) <= LONG_LINE else f"{frame.line[:CUT]}… ({len(frame.line)} characters)"
            out.append(Line(line.direction, Unparsed(placeholders.text(text))))
            continue
        theirs, ours = (agents, clients) if line.direction == AGENT else (clients, agents)
        if is_response(frame):
            frame = [ours(item) for item in frame] if isinstance(frame, list) else ours(frame)
        elif is_agent_request(frame):  # a request, whoever sends it
            frame = theirs(frame)
        elif isinstance(frame, dict) and frame.get("method") == CANCEL_REQUEST:  # names a request its sender sent
            frame = theirs.withdrawn(frame)
        out.append(Line(line.direction, placeholders.value(frame)))
    return out


def _encode(frame: Frame) -> str:
    return frame.line if isinstance(frame, Unparsed) else encode(frame)


def normalize_log(lines: Iterable[Any], placeholders: Placeholders) -> list[Any]:
    """A log with times zeroed (`createdAt` of the header, `time` of each event) and strings normalized."""
    out = []
    for line in lines:
        if isinstance(line, dict):
            line = {key: 0 if key in ("createdAt", "time") else value for key, value in line.items()}
            data = line.get("data")
            if isinstance(data, dict) and "durationMs" in data:  # how long a hook ran
                line["data"] = {**data, "durationMs": 0}
        out.append(placeholders.value(line))
    return out


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
