"""Whether two transcripts say the same thing, where names and formatting may differ.

Used to hold this server against the upstream golden transcripts: the same responses (result or
error code, stop reason), the same tool calls (ids, and the status of each `tool_call` and
`tool_call_update`), and the same concatenated thought and message text before each response.
The agent's own requests to the client, and updates a `_meta` attributes to a child agent, are
left out: how they look is this project's choice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from acp_agent.snapshot.frames import Frame, child_route, is_response, session_update


@dataclass(frozen=True)
class Digest:
    """What a transcript must keep to count as equivalent."""

    responses: list[str]
    """`result`, `result <stopReason>` or `error <code>`, one per response, in order."""
    tool_calls: list[str]
    """`tool_call <id> <status>` and `tool_call_update <id> <status>`, in order."""
    texts: list[tuple[str, str]]
    """(thought, message): the text streamed before each response (so per prompt), in order."""


def digest(frames: Iterable[Frame]) -> Digest:
    responses: list[str] = []
    tool_calls: list[str] = []
    texts: list[tuple[str, str]] = []
    thought: list[str] = []
    message: list[str] = []
    for frame in frames:
        if is_response(frame):
            for item in frame if isinstance(frame, list) else [frame]:
                responses.append(_response(item))
                texts.append(("".join(thought), "".join(message)))
                thought, message = [], []
            continue
        update = session_update(frame)
        if update is None or child_route(frame) is not None:
            continue
        kind = update.get("sessionUpdate")
        if kind in ("tool_call", "tool_call_update"):
            tool_calls.append(f"{kind} {update.get('toolCallId')} {update.get('status')}")
        elif kind in ("agent_thought_chunk", "agent_message_chunk"):
            text = (update.get("content") or {}).get("text", "")
            (thought if kind == "agent_thought_chunk" else message).append(text)
    return Digest(responses, tool_calls, texts)


def _response(frame: dict[str, Any]) -> str:
    if "error" in frame:
        return f"error {(frame['error'] or {}).get('code')}"
    result = frame.get("result")
    stop = result.get("stopReason") if isinstance(result, dict) else None
    return f"result {stop}" if stop else "result"


def compare(expected: Iterable[Frame], actual: Iterable[Frame]) -> list[str]:
    """The differences that matter between two transcripts; empty when they are equivalent."""
    want, got = digest(expected), digest(actual)
    problems = []
    for field in fields(Digest):
        a, b = getattr(want, field.name), getattr(got, field.name)
        if a != b:
            problems.append(f"{field.name} differ:\n  expected {a!r}\n  actual   {b!r}")
    return problems


def read_frames(path: Path) -> list[Frame]:
    """A JSONL transcript (a golden file, say), one frame per non-empty line."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
