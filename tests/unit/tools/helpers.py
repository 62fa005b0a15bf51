"""Small tools and contexts shared by the tools tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acp_agent.agent.agent import Agent
from acp_agent.agent.options import AgentOptions
from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Scope
from acp_agent.session.events import SessionEvent, SessionHeader, Trigger, TurnStartData, TurnStartEvent
from acp_agent.session.log import Session
from acp_agent.session.registry import default_registry
from acp_agent.tools import Tool, ToolCallContext, ToolDisplayEvent, ToolResult


def caller(session: Session, ctx: Context | None = None) -> Agent:
    """A real (unstarted) agent on `session`, route `s1`: the caller a tool call carries."""
    return Agent(ctx or Context(), session, AgentOptions(provider="test", model="test"), Scope(), "s1")


def call_context(call_id: str = "call_1", cwd: Path | None = None) -> ToolCallContext:
    cwd = cwd or Path.cwd()
    session = Session(SessionHeader(id="session-1", created_at=0, cwd=str(cwd)), registry=default_registry())
    return ToolCallContext(call_id=call_id, cwd=cwd, agent=caller(session))


class EchoParams(BaseModel):
    text: str


class EchoTool(Tool[EchoParams]):
    """Returns its argument; the name is per instance so one class serves many tests."""

    description = "Echo the text back."
    Params = EchoParams

    def __init__(self, name: str = "echo", *, concurrency_safe: bool = False) -> None:
        self.name = name
        self.concurrency_safe = concurrency_safe

    async def run(self, params: EchoParams, call: ToolCallContext) -> ToolResult:
        return ToolResult.text(f"{call.call_id}: {params.text}")


def logged_call(cwd: Path, *event_types: type[SessionEvent], call_id: str = "call_1") -> ToolCallContext:
    """A call whose agent has a real session log, in an open turn, that knows `tool/display` and
    `event_types`; `call.session.events` shows what the tool logged."""
    registry = default_registry()
    for event_type in (ToolDisplayEvent, *event_types):
        registry.register(event_type, "turn")
    session = Session(SessionHeader(id="session-1", created_at=0, cwd=str(cwd)), registry=registry)
    session.append(TurnStartEvent, TurnStartData(turn=1, trigger=Trigger(kind="message")))
    return ToolCallContext(call_id=call_id, cwd=cwd, agent=caller(session))


def logged(call: ToolCallContext, event_type: str) -> list[Any]:
    """The data of every `event_type` event the call's session holds."""
    return [event.data for event in call.session.events if event.type == event_type]
