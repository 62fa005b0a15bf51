"""The parent model's delegation tools (`subagent`, `subagent_fork`, ...). Loader plugin: one row
per tool, naming its provider."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from acp_agent.agent.calling import calling_agent
from acp_agent.kernel.context import Context
from acp_agent.kernel.models import Model
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.subagents import texts
from acp_agent.subagents.driver import InProcessRun, describe
from acp_agent.subagents.errors import SubagentError
from acp_agent.subagents.keys import BACKGROUND
from acp_agent.subagents.registry import SUBAGENTS, SubagentRequest
from acp_agent.tools.base import Tool, ToolCallContext, ToolPresentation, ToolResult
from acp_agent.tools.registry import TOOLS, ToolRegistry

SPAWN_DESCRIPTION = (
    "Delegate a self-contained task to a fresh child agent. It works in the same workspace with its"
    " own tools and does not see this conversation, so put everything it needs in `prompt`. Its"
    " final answer comes back as the result. Several calls in one step run at the same time."
)
FORK_DESCRIPTION = (
    "Delegate a task to a forked child agent that inherits this conversation's completed turns, so"
    " it knows what was said before. Its final answer comes back as the result. Several calls in one"
    " step run at the same time."
)


class SubagentParams(Model):
    description: str = Field(description="A few words saying what the child will do (shown to the user).")
    prompt: str = Field(description="The task, as the child's user message.")
    output_schema: dict[str, Any] | None = Field(
        default=None,
        description=(
            "Optional JSON Schema (an object schema) the child must answer with; the result is that JSON value."
        ),
    )
    run_in_background: bool = Field(default=False, alias="run_in_background", description=texts.BACKGROUND_PARAM)


class SubagentTool(Tool[SubagentParams]):
    Params = SubagentParams
    concurrency_safe = True

    def __init__(
        self,
        name: str,
        description: str,
        provider: str,
        *,
        max_depth: int | None = None,
        tool_filter: tuple[str, ...] | None = None,
        persona: str | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.provider = provider
        self.max_depth = max_depth
        self.tool_filter = tool_filter
        self.persona = persona

    def present(self, params: SubagentParams) -> ToolPresentation:
        return ToolPresentation(title=params.description or self.name, kind="other", content=[params.prompt])

    async def run(self, params: SubagentParams, call: ToolCallContext) -> ToolResult:
        if not params.run_in_background:
            return await self._run(params, call)
        background = call.ctx.get(BACKGROUND)
        if params.output_schema is not None:
            return ToolResult.failure(texts.BACKGROUND_WITH_SCHEMA, "subagent_not_started")
        parent = calling_agent(call)
        if not background.reserve(parent):
            return ToolResult.failure(texts.background_limit(background.limit), "subagent_not_started")
        adopted = False
        try:
            run = await call.ctx.get(SUBAGENTS).start(self.provider, self._request(params, call))
            if not isinstance(run, InProcessRun):
                await run.dispose()
                return ToolResult.failure(texts.background_unsupported(self.provider), "subagent_not_started")
            entry = background.adopt(parent, run.child, run.ticket, params.description)
            adopted = True
        except SubagentError as exc:
            return ToolResult.failure(str(exc), "subagent_not_started")
        finally:
            if not adopted:
                background.release(parent)
        return ToolResult.text(texts.background_started(entry.id, params.description))

    async def _run(self, params: SubagentParams, call: ToolCallContext) -> ToolResult:
        """A one-shot child: the call's result is the child's."""
        try:
            run = await call.ctx.get(SUBAGENTS).start(self.provider, self._request(params, call))
        except SubagentError as exc:
            return ToolResult.failure(str(exc), "subagent_not_started")
        try:
            result = await run.result()
        finally:
            await run.dispose()
        is_error, text = describe(result, structured=params.output_schema is not None)
        return ToolResult.failure(text, f"subagent_{result.reason.kind}") if is_error else ToolResult.text(text)

    def _request(self, params: SubagentParams, call: ToolCallContext) -> SubagentRequest:
        return SubagentRequest(
            parent=calling_agent(call),
            prompt=params.prompt,
            description=params.description,
            spawn_call_id=call.call_id,
            output_schema=params.output_schema,
            max_depth=self.max_depth,
            tool_filter=self.tool_filter,
            persona=self.persona,
            background=params.run_in_background,
        )


name = "subagent-tool"
inject = ("subagents", "tools")


class Config(PluginConfig):
    tool_name: str = "subagent"
    provider: str = "spawn"
    description: str | None = None
    """What the parent model reads about the tool (default: the spawn or the fork text)."""
    max_depth: int | None = 2
    """Deepest delegation allowed (a top-level agent is depth 0, its children depth 1)."""
    tools: list[str] | None = None
    """If set, the only tools the children may call."""
    persona: str | None = None
    """If set, the children's persona section instead of the default one."""


def apply(ctx: Context, config: Config) -> Disposer:
    default = FORK_DESCRIPTION if config.provider == "fork" else SPAWN_DESCRIPTION
    tool = SubagentTool(
        config.tool_name,
        config.description or default,
        config.provider,
        max_depth=config.max_depth,
        tool_filter=tuple(config.tools) if config.tools is not None else None,
        persona=config.persona,
    )
    tools: ToolRegistry = ctx.get(TOOLS)
    return tools.register(tool)
