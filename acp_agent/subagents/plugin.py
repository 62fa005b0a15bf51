"""Loader plugin providing `ctx.get(SUBAGENTS)`, the registry of subagent providers, and
`ctx.get(BACKGROUND)`, the background children and the notices they send their parents."""

from __future__ import annotations

from acp_agent.agent.agent import CANCELLING, DISPOSING
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.persistence import SESSIONS
from acp_agent.subagents.acp import AcpUpdateEvent
from acp_agent.subagents.background import DEFAULT_LIMIT, Background, NoticeEvent
from acp_agent.subagents.keys import BACKGROUND
from acp_agent.subagents.registry import SUBAGENTS, SubagentRegistry
from acp_agent.tools.base import BEFORE_MODEL_CALL

name = "subagents"
inject = ("agents", "sessions")


class Config(PluginConfig):
    max_background: int = DEFAULT_LIMIT
    """How many background children of one parent may run at once."""


def apply(ctx: Context, config: Config) -> Disposer:
    background = Background(ctx, config.max_background)
    return combine(
        ctx.provide(SUBAGENTS, SubagentRegistry()),
        ctx.provide(BACKGROUND, background),
        ctx.get(SESSIONS).registry.register(NoticeEvent, "turn"),
        ctx.get(SESSIONS).registry.register(AcpUpdateEvent, "turn"),
        ctx.events.on(BEFORE_MODEL_CALL, background.before_model_call),
        ctx.events.on(CANCELLING, background.cancelling),
        ctx.events.on(DISPOSING, background.disposing),
    )
