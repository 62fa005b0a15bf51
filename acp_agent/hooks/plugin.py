"""Loader plugin providing `ctx.get(HOOKS)`: Claude Code and Codex hooks, and the agent's own.

Row: `{id: hooks, name: acp_agent.hooks.plugin}`, before the `permissions` row: its gate comes
first (a hook's deny needs no question, its `ask` asks whatever the mode) and hands a call it does
not decide to the permission decision itself. It registers the `hook/run` event type (free), the
gate, the turn hooks and the reading of a session's hooks when it starts; a session with hooks
(or a hooks file left out) offers `/hooks` when a commands row came first.
"""

from __future__ import annotations

from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.keys import TURN_HOOKS
from acp_agent.hooks.events import HookRunEvent
from acp_agent.hooks.service import HOOKS, Hooks
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.permissions.service import PERMISSIONS
from acp_agent.session.persistence import SESSIONS
from acp_agent.tools.registry import TOOLS
from acp_agent.trust.service import TRUST

name = "hooks"
inject = ("sessions", "tools")


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    if ctx.has(PERMISSIONS):
        raise ValueError("the hooks row must come before the permissions row")
    hooks = Hooks(ctx)
    trust = ctx.find(TRUST)
    return combine(
        *([trust.add_items(hooks.trust_items)] if trust is not None else []),
        ctx.get(SESSIONS).registry.register(HookRunEvent, "free"),
        ctx.provide(HOOKS, hooks),
        ctx.provide(TURN_HOOKS, hooks),
        ctx.get(TOOLS).gate(None, hooks.gate),
        ctx.events.on(PUBLISHED, hooks.published),
    )
