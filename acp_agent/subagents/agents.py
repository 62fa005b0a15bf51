"""`send_message`, `list_agents`, `stop_agent`: how a parent reaches its background children.
Loader plugin: `acp_agent.subagents.agents`."""

from __future__ import annotations

import anyio
from pydantic import Field

from acp_agent.agent.calling import calling_agent
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.content import TextContent
from acp_agent.subagents import texts
from acp_agent.subagents.background import BackgroundChild
from acp_agent.subagents.keys import BACKGROUND
from acp_agent.tools.base import Tool, ToolCallContext, ToolParams, ToolPresentation, ToolResult
from acp_agent.tools.registry import TOOLS

UNKNOWN_AGENT = "unknown_agent"


class SendMessageParams(ToolParams):
    agent_id: str = Field(description=texts.AGENT_ID_PARAM)
    message: str = Field(description=texts.SEND_MESSAGE_PARAM)
    wait: bool = Field(default=False, description=texts.SEND_WAIT_PARAM)


class AgentParams(ToolParams):
    agent_id: str = Field(description=texts.AGENT_ID_PARAM)


class NoParams(ToolParams):
    pass


def _find(call: ToolCallContext, agent_id: str) -> BackgroundChild | ToolResult:
    background = call.ctx.get(BACKGROUND)
    entry = background.find(calling_agent(call), agent_id)
    if entry is None:
        known = [child.id for child in background.children(calling_agent(call))]
        return ToolResult.failure(texts.unknown_agent(agent_id, known), UNKNOWN_AGENT)
    return entry


class SendMessageTool(Tool[SendMessageParams]):
    name = texts.SEND_MESSAGE_TOOL
    description = texts.SEND_MESSAGE_DESCRIPTION
    Params = SendMessageParams
    concurrency_safe = True

    def present(self, params: SendMessageParams) -> ToolPresentation:
        return ToolPresentation(
            title=f"{texts.SEND_MESSAGE_TOOL} {params.agent_id}", kind="other", content=[params.message]
        )

    async def run(self, params: SendMessageParams, call: ToolCallContext) -> ToolResult:
        found = _find(call, params.agent_id)
        if isinstance(found, ToolResult):
            return found
        busy = found.agent.busy
        ticket = call.ctx.get(BACKGROUND).message(found, [TextContent(text=params.message)])
        if not params.wait:
            return ToolResult.text(texts.message_queued(found.id) if busy else texts.message_sent(found.id))
        found.awaited.add(ticket)
        try:
            await ticket.wait()
        except anyio.get_cancelled_exc_class():
            found.awaited.discard(ticket)  # no one reads the answer here: its notice will tell
            raise
        is_error, text = found.result
        return ToolResult.failure(text, "subagent_failed") if is_error else ToolResult.text(text)


class ListAgentsTool(Tool[NoParams]):
    name = texts.LIST_AGENTS_TOOL
    description = texts.LIST_AGENTS_DESCRIPTION
    Params = NoParams
    concurrency_safe = True

    def present(self, params: NoParams) -> ToolPresentation:
        return ToolPresentation(title=texts.LIST_AGENTS_TOOL, kind="read")

    async def run(self, params: NoParams, call: ToolCallContext) -> ToolResult:
        lines = [
            texts.agent_line(child.id, child.state, child.description, child.activity)
            for child in call.ctx.get(BACKGROUND).children(calling_agent(call))
        ]
        return ToolResult.text("\n".join(lines) or texts.NO_AGENTS)


class StopAgentTool(Tool[AgentParams]):
    name = texts.STOP_AGENT_TOOL
    description = texts.STOP_AGENT_DESCRIPTION
    Params = AgentParams
    concurrency_safe = True

    def present(self, params: AgentParams) -> ToolPresentation:
        return ToolPresentation(title=f"{texts.STOP_AGENT_TOOL} {params.agent_id}", kind="other")

    async def run(self, params: AgentParams, call: ToolCallContext) -> ToolResult:
        found = _find(call, params.agent_id)
        if isinstance(found, ToolResult):
            return found
        if found.state != "running":
            return ToolResult.text(texts.not_running(found.id, found.state))
        await call.ctx.get(BACKGROUND).stop(found, texts.STOPPED_BY_PARENT)
        return ToolResult.text(texts.stopped(found.id))


name = "subagent-agents"
inject = ("subagents", "tools")


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    tools = ctx.get(TOOLS)
    return combine(*(tools.register(tool) for tool in (SendMessageTool(), ListAgentsTool(), StopAgentTool())))
