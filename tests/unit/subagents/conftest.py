"""The real composition with the subagent rows: kernel, session log, scripted model, bash,
`ctx.get(SUBAGENTS)` with the `spawn` and `fork` providers, and the `subagent` / `subagent_fork` tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.agent import Agent
from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.keys import AGENTS
from acp_agent.kernel import Context, Row, compose
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.service import STREAM
from acp_agent.session import SessionEvent, TextContent


def rows(sessions: Path, *, agents: dict[str, Any], spawn_tool: dict[str, Any], fork_tool: dict[str, Any]) -> list[Row]:
    """Everything but the model row (the test inserts its spy before the model)."""
    return [
        Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(sessions)}),
        Row(id="llm", name="acp_agent.llm.service"),
        Row(id="tools", name="acp_agent.tools.plugin"),
        Row(id="agents", name="acp_agent.agent.plugin", config={"provider": "test", "model": "test", **agents}),
        Row(id="bash", name="acp_agent.tools.bash", config={"timeoutSeconds": 5}),
        Row(id="subagents", name="acp_agent.subagents.plugin"),
        Row(id="spawn", name="acp_agent.subagents.spawn"),
        Row(id="fork", name="acp_agent.subagents.fork"),
        Row(
            id="subagent-tool",
            name="acp_agent.subagents.tool",
            config={"toolName": "subagent", "provider": "spawn", "maxDepth": 2, **spawn_tool},
        ),
        Row(
            id="subagent-fork-tool",
            name="acp_agent.subagents.tool",
            config={"toolName": "subagent_fork", "provider": "fork", "maxDepth": 2, **fork_tool},
        ),
    ]


@dataclass
class Harness:
    """A composed context plus what the tests observe of it."""

    ctx: Context
    sessions: Path
    workspace: Path
    requests: list[LlmRequest] = field(default_factory=list)
    """Every model request, in the order they were made (a spy ahead of the scripted model)."""
    published: list[Agent] = field(default_factory=list)
    """Every agent published, parent and children, kept after they are disposed."""

    def of(self, route: str) -> list[LlmRequest]:
        return [request for request in self.requests if request.route == route]

    def agent(self, route: str) -> Agent:
        [found] = [agent for agent in self.published if agent.route == route]
        return found

    def header(self, agent: Agent) -> dict[str, Any]:
        """The session header as persisted (line 0 of the log on disk)."""
        lines = (self.sessions / agent.id / "session.jsonl").read_text().splitlines()
        header: dict[str, Any] = json.loads(lines[0])
        return header

    async def parent(self, **create: Any) -> Agent:
        return await self.ctx.get(AGENTS).create(cwd=str(self.workspace), **create)


def text(value: str) -> list[TextContent]:
    return [TextContent(text=value)]


def of_type(agent: Agent, kind: str) -> list[Any]:
    return [event.data for event in agent.session.events if event.type == kind]


def kinds(agent: Agent) -> list[str]:
    return [event.type for event in agent.session.all_events()]


def results(agent: Agent) -> list[str]:
    """The text of each tool result in `agent`'s log, in order."""
    return ["".join(block.text for block in result.content) for result in of_type(agent, "tool/result")]


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def delegate(call_id: str, prompt: str, tool: str = "subagent", **extra: Any) -> dict[str, Any]:
    return call(call_id, tool, description=f"do {call_id}", prompt=prompt, **extra)


def bash(call_id: str, command: str) -> dict[str, Any]:
    return call(call_id, "bash", command=command, description="run")


async def logged(agent: Agent, kind: str, chunk: str | None = None) -> None:
    """Wait until `agent` logs an event of `kind` (an `assistant/chunk` of type `chunk`), at once
    if it already has."""
    seen = anyio.Event()

    def matches(event: SessionEvent) -> bool:
        return event.type == kind and (chunk is None or event.data.chunk.type == chunk)

    def watch(event: SessionEvent) -> None:
        if matches(event):
            seen.set()

    unsubscribe = agent.session.subscribe(watch)
    try:
        # Every event, the streamed chunks a store keeps on disk only included.
        if not any(matches(event) for event in agent.session.all_events()):
            with anyio.fail_after(5):
                await seen.wait()
    finally:
        unsubscribe()


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Harness]:
    """`harness(script, agents=..., spawn_tool=..., fork_tool=...)`: the composition playing `script`
    (the scripted model's format, keyed by route)."""
    monkeypatch.delenv("ACP_AGENT_SESSIONS", raising=False)

    def make(
        script: Any,
        *,
        agents: dict[str, Any] | None = None,
        spawn_tool: dict[str, Any] | None = None,
        fork_tool: dict[str, Any] | None = None,
    ) -> Harness:
        path = tmp_path / "script.json"
        path.write_text(json.dumps(script))
        workspace = tmp_path / "ws"
        workspace.mkdir(exist_ok=True)
        sessions = tmp_path / "sessions"
        ctx = compose(rows(sessions, agents=agents or {}, spawn_tool=spawn_tool or {}, fork_tool=fork_tool or {}))
        found = Harness(ctx, sessions, workspace)

        async def spy(request: LlmRequest, next: Any) -> Any:
            found.requests.append(request)
            return await next()

        # The model owns every call it gets, so the spy goes before the model's row.
        ctx.events.on(STREAM, spy)
        ctx.events.on(PUBLISHED, found.published.append)
        compose([Row(id="model", name="acp_agent.llm.scripted", config={"script": str(path)})], ctx)
        return found

    return make
