"""Builders of small recorded scenarios (session logs as JSONL files) and stream helpers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_agent.llm.replay import ReplayModel
from acp_agent.llm.request import LlmRequest, UserMessage
from acp_agent.session.content import StreamChunk, TextContent

Line = dict[str, Any]


def text_chunks(text: str, *, finish: str = "stop", index: int = 0) -> list[Line]:
    """The chunks (JSON form) of one model call answering `text` in two deltas."""
    half = len(text) // 2
    return [
        {"type": "block-start", "index": index, "blockType": "text"},
        {"type": "text-delta", "index": index, "text": text[:half]},
        {"type": "text-delta", "index": index, "text": text[half:]},
        {"type": "block-end", "index": index, "block": {"type": "text", "text": text}},
        {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 2}},
        {"type": "finish", "reason": {"kind": finish}},
    ]


def call_chunks(call_id: str, name: str, arguments: dict[str, Any]) -> list[Line]:
    """The chunks of one model call that makes a single tool call."""
    raw = json.dumps(arguments)
    return [
        {"type": "block-start", "index": 0, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": 0, "id": call_id, "name": name, "argumentsDelta": raw},
        {
            "type": "block-end",
            "index": 0,
            "block": {"type": "tool-call", "id": call_id, "name": name, "arguments": raw},
        },
        {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 5}},
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]


@dataclass
class Step:
    """One step of a recorded turn: the model call's chunks (maybe none) and the tools it ran."""

    chunks: list[Line] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)
    """Tool result text per call id, for the calls the chunks make."""


def spawn(call_id: str, prompt: str, result: str = "done") -> Step:
    """A step that calls the `subagent` tool with `prompt`."""
    return Step(call_chunks(call_id, "subagent", {"description": "delegate", "prompt": prompt}), {call_id: result})


class Log:
    """A session log written the way the store writes it: a header line, then one event a line."""

    def __init__(self, session_id: str, *, created_at: int = 0, **header: Any) -> None:
        self.lines: list[Line] = [
            {"type": "session", "version": 0, "id": session_id, "createdAt": created_at, **header}
        ]
        self.turns = 0

    @property
    def header(self) -> Line:
        return self.lines[0]

    def add(self, type: str, **data: Any) -> Log:
        self.lines.append({"type": type, "seq": len(self.lines) - 1, "time": 0, "data": data})
        return self

    def turn(self, prompt: str, *steps: Step) -> Log:
        """A completed turn: the user's prompt, then each step with its chunks, message and tools."""
        self.turns += 1
        turn = self.turns
        self.add("turn/start", turn=turn, trigger={"kind": "message", "source": {"kind": "user"}})
        self.add("user/message", content=[{"type": "text", "text": prompt}], source={"kind": "user"})
        for number, step in enumerate(steps, start=1):
            self.add("step/start", turn=turn, step=number)
            for chunk in step.chunks:
                self.add("assistant/chunk", turn=turn, step=number, chunk=chunk)
            blocks = [chunk["block"] for chunk in step.chunks if chunk["type"] == "block-end"]
            if step.chunks:
                self.add("assistant/message", turn=turn, step=number, content=blocks)
            for block in blocks:
                if block["type"] == "tool-call":
                    self.add(
                        "tool/call",
                        turn=turn,
                        step=number,
                        callId=block["id"],
                        name=block["name"],
                        arguments=block["arguments"],
                    )
                    text = step.results[block["id"]]
                    self.add(
                        "tool/result",
                        turn=turn,
                        step=number,
                        callId=block["id"],
                        content=[{"type": "text", "text": text}],
                        isError=False,
                    )
            self.add("step/end", turn=turn, step=number)
        self.add("turn/end", turn=turn, reason={"kind": "completed"})
        return self

    def write(self, directory: Path, name: str = "session.jsonl") -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / name
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def write_override(directory: Path, data: object) -> None:
    (directory / "replay.override.json").write_text(json.dumps(data), encoding="utf-8")


def request(route: str = "s1", prompt: str = "hi") -> LlmRequest:
    return LlmRequest(
        provider="replay",
        model="replay",
        system="be brief",
        messages=[UserMessage(content=[TextContent(text=prompt)])],
        route=route,
        session_id="session-1",
    )


async def unreachable() -> Any:
    raise AssertionError("the replay model must own the call, not defer it")


async def collect(stream: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    return [chunk async for chunk in stream]


async def play(model: ReplayModel, route: str = "s1") -> list[StreamChunk]:
    """Ask `model` for one call of `route` and read the whole stream."""
    return await collect(await model.listener(request(route), next=unreachable))


def dumped(chunks: Sequence[StreamChunk]) -> list[Line]:
    return [chunk.dump() for chunk in chunks]
