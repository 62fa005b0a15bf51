"""Loader plugin providing `ctx.get(SKILLS)`: SKILL.md files as a catalog, a tool and commands.

Row: `{id: skills, name: acp_agent.skills.plugin}`, after `commands` (for `/<name>`). It registers
the `skills/update` event type (free), the finding of a session's skills when it is published and
the catalog and `skill` tool of each agent before its turns.
"""

from __future__ import annotations

from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.loop import TURN_STARTING
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.session.persistence import SESSIONS
from acp_agent.skills.events import SkillsEvent
from acp_agent.skills.service import SKILLS, Skills

name = "skills"
inject = ("sessions", "tools", "prompt")


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    skills = Skills(ctx)
    return combine(
        ctx.get(SESSIONS).registry.register(SkillsEvent, "free"),
        ctx.provide(SKILLS, skills),
        ctx.events.on(PUBLISHED, skills.published),
        ctx.events.on(TURN_STARTING, skills.refresh),
    )
