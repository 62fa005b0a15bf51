"""`acp-agent demo`: replay a bundled scenario through the real server and print it readably.

Keyless and offline: the model's side comes from the scenario's recorded session log, while
everything else (the agent loop, the bash tool editing a scratch copy of the workspace, the ACP
wire) is the real thing.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio

from acp_agent.snapshot.frames import is_response, session_update
from acp_agent.snapshot.runner import RunResult, packaged, run_scenario

SCENARIO = "workspace-edit"
DIM, RESET = "\x1b[2m", "\x1b[0m"


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
class Transcript:
    """Prints each prompt, then what the agent streamed for it, then how it ended."""

    out: TextIO
    color: bool
    _lines: list[str] = field(default_factory=list)
    _streaming: tuple[str, list[str]] | None = None

    def show(self, result: RunResult) -> None:
        prompts = _prompts(result.sent)
        for line in result.stdout:
            frame = json.loads(line)
            update = session_update(frame)
            if update is not None:
                self._update(update)
            elif is_response(frame) and frame.get("id") in prompts:
                self._flush_stream()
                print(f"> {prompts[frame['id']]}\n", file=self.out)
                for text in self._lines:
                    print(text, file=self.out)
                self._lines = []
                print(f"  {_outcome(frame)}\n", file=self.out)

    def _update(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind in ("agent_thought_chunk", "agent_message_chunk"):
            if self._streaming is None or self._streaming[0] != kind:
                self._flush_stream()
                self._streaming = (kind, [])
            self._streaming[1].append((update.get("content") or {}).get("text", ""))
            return
        self._flush_stream()
        if kind == "tool_call":
            self._lines.append(f"  tool {update.get('toolCallId')}: {update.get('title')} [{update.get('status')}]")
        elif kind == "tool_call_update":
            self._lines.append(f"  tool {update.get('toolCallId')}: {update.get('status')}")
            for item in update.get("content") or []:
                text = (item.get("content") or {}).get("text", "")
                self._lines += [f"      {line}" for line in text.splitlines()]

    def _flush_stream(self) -> None:
        if self._streaming is None:
            return
        kind, pieces = self._streaming
        self._streaming = None
        text = "".join(pieces)
        if kind == "agent_thought_chunk":
            line = f"  thinking: {text}"
            self._lines.append(f"{DIM}{line}{RESET}" if self.color else line)
        else:
            self._lines.append(f"  agent: {text}")


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
