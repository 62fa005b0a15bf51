"""Loader plugin providing `ctx.get(PROMPT)` (system prompt sections) and `ctx.get(AGENTS)` (the factory)."""

from __future__ import annotations

from pydantic import Field

from acp_agent.agent.config import ConfigEvent, ModelEntry
from acp_agent.agent.factory import DEFAULT_MAX_ATTACHMENT_BYTES, AgentFactory
from acp_agent.agent.keys import AGENTS, PROMPT
from acp_agent.agent.options import AgentDefaults, AgentOptions
from acp_agent.agent.prompt import PERSONA_SECTION, ClientPromptEvent, Section, SystemPrompt
from acp_agent.kernel.context import SHUTDOWN, Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.persistence import SESSIONS

PERSONA = (
    "You are acp-agent, a coding agent working for the user in {{cwd}} through their editor, "
    "running on the model {{model}}. Use the tools to inspect and change the workspace; keep "
    "answers short and say what you did."
)

name = "agents"
inject = ("sessions", "llm", "tools")


class Config(PluginConfig, AgentDefaults):
    """The agents' `AgentDefaults` (provider, model, maxTokens, maxSteps, contextWindow: their
    fields and defaults are the options'), and:"""

    persona: str = PERSONA
    """The order-0 `persona` section; `{{model}}` and `{{cwd}}` are filled in per agent."""
    models: list[ModelEntry] = []
    """The models a session may switch to (the editor's model picker), `model` among them (it is
    put first when the list does not name it). Each is a model id of the same `provider`, with
    `vision` (it takes images) and `thoughtLevels` (the reasoning efforts offered) if it has them."""
    max_attachment_bytes: int = Field(default=DEFAULT_MAX_ATTACHMENT_BYTES, gt=0)
    """The largest image or binary file a prompt may attach (decoded bytes): attachments are kept
    in the session log, so a reopened session shows them and the model reads them again."""
    route_base: str = ""
    """What the routes of this process's top-level sessions are under: set (the packaged
    composition reads `ACP_AGENT_ROUTE`) when this server runs as another's ACP child, to that
    child agent's route, so the logs of both processes name their agents apart."""


def apply(ctx: Context, config: Config) -> Disposer:
    prompt = SystemPrompt()
    prompt.add(Section(order=0, name=PERSONA_SECTION, text=config.persona))
    options = AgentOptions.model_validate(config.model_dump(include=set(AgentDefaults.model_fields)))
    agents = AgentFactory(
        ctx, options, config.models, max_attachment_bytes=config.max_attachment_bytes, route_base=config.route_base
    )
    return combine(
        ctx.get(SESSIONS).registry.register(ConfigEvent, "free"),
        ctx.get(SESSIONS).registry.register(ClientPromptEvent, "free"),
        ctx.provide(PROMPT, prompt),
        ctx.provide(AGENTS, agents),
        ctx.events.on(SHUTDOWN, agents.dispose_all),
    )
