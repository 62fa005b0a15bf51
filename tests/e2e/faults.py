"""A loader plugin that raises where a test asks, and a model that needs no script.

A session's failure must stay that session's: this plugin makes one fail at a chosen place, with a
chosen kind of exception, through the real server. The test writes `<session cwd>/.fault` as JSON
`{"place", "kind", "on"?}`, read each time the plugin could raise:

- `published`: as the session's agent is published (`session/new`, `session/load`);
- `turn-starting`: as a turn starts, where the project's instructions are read;
- `subscriber`: in a subscriber of the session's log, at each event of type `on`;
- `commands`: the session offers a command whose entry in the list cannot be made;
- `fill`: at each event of type `on`, the file `filler` grows until its disk is full (the disk
  fills up at a chosen point of a turn, not at whatever write comes first).

The model: a turn's first call asks for one `read_file` of `notes.txt`; the next answers "done."
"""

from __future__ import annotations

import errno
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from acp_agent.agent.agent import Agent
from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.loop import TURN_STARTING
from acp_agent.commands import COMMANDS, Command
from acp_agent.kernel import Context, Disposer, PluginConfig
from acp_agent.kernel.scope import Scope
from acp_agent.llm.request import LlmRequest, ToolMessage
from acp_agent.llm.scripted import ScriptedCall, ScriptedToolCall, compile_call
from acp_agent.llm.service import STREAM
from acp_agent.session.content import StreamChunk
from acp_agent.session.events import SessionEvent

FAULT_FILE = ".fault"

KINDS: dict[str, Callable[[], Exception]] = {
    "ValueError": lambda: ValueError("forced: a value out of range"),
    "RecursionError": lambda: RecursionError("maximum recursion depth exceeded (forced)"),
    "KeyError": lambda: KeyError("forced"),
    "TypeError": lambda: TypeError("forced: not serializable"),
    "AssertionError": lambda: AssertionError("forced"),
    "OSError": lambda: OSError(errno.EIO, "Input/output error"),
    "UnicodeEncodeError": lambda: UnicodeEncodeError("utf-8", "\udc80", 0, 1, "surrogates not allowed"),
}

name = "faults"
inject = ("llm",)


class Config(PluginConfig):
    pass


def _fault(agent: Agent, place: str) -> dict[str, Any] | None:
    path = Path(agent.session.cwd or ".") / FAULT_FILE
    if not path.is_file():
        return None
    fault: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return fault if fault["place"] == place else None


def _raise(fault: dict[str, Any]) -> None:
    raise KINDS[fault["kind"]]()


class _Subscriber:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def __call__(self, event: SessionEvent) -> None:
        fault = _fault(self.agent, "subscriber") or _fault(self.agent, "fill")
        if fault is None or fault["on"] != event.type:
            return
        if fault["place"] == "subscriber":
            _raise(fault)
        fill(Path(fault["filler"]))


def fill(path: Path) -> None:
    """Grow `path` until its file system has no room left."""
    with path.open("ab", buffering=0) as file:
        try:
            while True:
                file.write(b"\0" * 65536)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise


def _run_nothing(invocation: Any) -> Any:
    raise AssertionError("never offered: its entry cannot be made")


def _published(ctx: Context, agent: Agent) -> None:
    if (fault := _fault(agent, "published")) is not None:
        _raise(fault)
    agent.scope.add(agent.session.subscribe(_Subscriber(agent), chunks=False))
    if _fault(agent, "commands") is not None:
        broken = Command("broken", 42, _run_nothing, None)  # type: ignore[arg-type]  # no description: the list cannot be made
        ctx.get(COMMANDS).add(broken, owner=agent.scope)


def _turn_starting(agent: Agent) -> None:
    if (fault := _fault(agent, "turn-starting")) is not None:
        _raise(fault)


async def _model(request: LlmRequest, next: Callable[[], Awaitable[Any]]) -> AsyncIterator[StreamChunk]:
    if isinstance(request.messages[-1], ToolMessage):
        call = ScriptedCall(text="done.")
    else:
        call = ScriptedCall(
            tool_calls=[ScriptedToolCall(id="call_1", name="read_file", arguments={"path": "notes.txt"})]
        )
    entry = compile_call(call)

    async def stream() -> AsyncIterator[StreamChunk]:
        for chunk in entry.chunks:  # type: ignore[union-attr]  # a scripted call compiles to chunks
            yield chunk

    return stream()


def apply(ctx: Context, config: Config) -> Disposer:
    scope = Scope()
    scope.add(ctx.events.on(PUBLISHED, lambda agent: _published(ctx, agent)))
    scope.add(ctx.events.on(TURN_STARTING, _turn_starting))
    scope.add(ctx.events.on(STREAM, _model))
    return scope.dispose
