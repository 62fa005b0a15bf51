"""A composition with the permissions row: the real loop, bash, the file tools, subagents, a
scripted model, and an asker the test scripts."""

from __future__ import annotations

import json
from collections import deque
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
from acp_agent.permissions import Answer, Asker, AskFailed, PermissionRequest, Permissions
from acp_agent.permissions.service import PERMISSIONS
from acp_agent.session import TextContent


class ScriptedAsker(Asker):
    """Answers from a queue (an `AskFailed` in it is raised); `hold` makes it wait until released."""

    def __init__(self, answers: list[Answer | AskFailed]) -> None:
        self.answers: deque[Answer | AskFailed] = deque(answers)
        self.asked: list[PermissionRequest] = []
        self.hold = False
        self.waiting = anyio.Event()
        self.release = anyio.Event()

    async def ask(self, request: PermissionRequest) -> Answer:
        self.asked.append(request)
        if self.hold:
            self.waiting.set()
            await self.release.wait()
        answer = self.answers.popleft()
        if isinstance(answer, AskFailed):
            raise answer
        return answer


@dataclass
class Harness:
    ctx: Context
    workspace: Path
    permissions: Permissions
    """Kept: the service leaves the context when it stops running."""
    published: list[Agent] = field(default_factory=list)

    def agent(self, route: str) -> Agent:
        [found] = [agent for agent in self.published if agent.route == route]
        return found

    async def run(self, prompt: str = "go", agent: Agent | None = None) -> Agent:
        agent = agent or await self.ctx.get(AGENTS).create(cwd=str(self.workspace))
        with anyio.fail_after(5):
            await agent.followup([TextContent(text=prompt)]).wait()
        return agent


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def bash(call_id: str, command: str = "echo ran") -> dict[str, Any]:
    return call(call_id, "bash", command=command)


def results(agent: Agent) -> list[str]:
    return ["".join(b.text for b in e.data.content) for e in agent.session.events if e.type == "tool/result"]


def codes(agent: Agent) -> list[str | None]:
    return [e.data.error.code if e.data.error else None for e in agent.session.events if e.type == "tool/result"]


def of_type(agent: Agent, kind: str) -> list[Any]:
    return [event.data for event in agent.session.events if event.type == kind]


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Harness]:
    """`harness(script, sandbox=None, **permissions config)`: the composition playing `script` (the
    scripted model's format), with the permissions row configured by the keyword arguments and the
    sandbox row (Landlock) by `sandbox`."""
    monkeypatch.delenv("ACP_AGENT_SESSIONS", raising=False)
    monkeypatch.setenv("ACP_AGENT_CONFIG", str(tmp_path / "config"))  # its own saved command rules

    def make(script: Any, sandbox: dict[str, Any] | None = None, **config: Any) -> Harness:
        sandbox = sandbox or {}
        path = tmp_path / "script.json"
        path.write_text(json.dumps(script))
        workspace = tmp_path / "ws"
        workspace.mkdir(exist_ok=True)
        ctx = compose(
            [
                Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path / "sessions")}),
                Row(id="llm", name="acp_agent.llm.service"),
                Row(id="tools", name="acp_agent.tools.plugin"),
                Row(id="agents", name="acp_agent.agent.plugin", config={"provider": "test", "model": "test"}),
                Row(id="sandbox", name="acp_agent.sandbox.plugin", config={"backend": "landlock", **sandbox}),
                Row(id="bash", name="acp_agent.tools.bash", config={"timeoutSeconds": 5}),
                Row(id="files", name="acp_agent.tools.files"),
                Row(id="todo", name="acp_agent.tools.todo"),
                Row(id="permissions", name="acp_agent.permissions.plugin", config=config),
                Row(id="subagents", name="acp_agent.subagents.plugin"),
                Row(id="spawn", name="acp_agent.subagents.spawn"),
                Row(
                    id="subagent-tool",
                    name="acp_agent.subagents.tool",
                    config={"toolName": "subagent", "provider": "spawn"},
                ),
                Row(id="model", name="acp_agent.llm.scripted", config={"script": str(path)}),
            ]
        )
        found = Harness(ctx, workspace, ctx.get(PERMISSIONS))
        ctx.events.on(PUBLISHED, found.published.append)
        return found

    return make
