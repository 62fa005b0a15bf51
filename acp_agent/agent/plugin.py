"""Loader plugin providing `ctx.prompt` (system prompt sections) and `ctx.agents` (the factory)."""

from __future__ import annotations

from acp_agent.agent.factory import AgentFactory
from acp_agent.agent.options import AgentOptions
from acp_agent.agent.prompt import Section, SystemPrompt
from acp_agent.kernel import SHUTDOWN, Context, Disposer, PluginConfig, combine

PERSONA = (
    "You are acp-agent, a coding agent working for the user in {{cwd}} through their editor, "
    "running on the model {{model}}. Use the tools to inspect and change the workspace; keep "
    "answers short and say what you did."
)

name = "agents"
inject = ("sessions", "llm", "tools")


class Config(PluginConfig):
    provider: str = "deepseek"
    model: str = "deepseek-chat"
    max_tokens: int | None = None
    max_steps: int = 50
    persona: str = PERSONA
    """The order-0 `persona` section; `{{model}}` and `{{cwd}}` are filled in per agent."""


def apply(ctx: Context, config: Config) -> Disposer:
    prompt = SystemPrompt()
    prompt.add(Section(order=0, name="persona", text=config.persona))
    options = AgentOptions(
        provider=config.provider, model=config.model, max_tokens=config.max_tokens, max_steps=config.max_steps
    )
    agents = AgentFactory(ctx, options)
    return combine(
        ctx.provide("prompt", prompt),
        ctx.provide("agents", agents),
        ctx.events.on(SHUTDOWN, agents.dispose_all),
    )
