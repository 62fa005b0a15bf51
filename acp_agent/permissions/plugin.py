"""Loader plugin providing `ctx.get(PERMISSIONS)`: session modes and the approval gate of every agent.

Row: `{id: permissions, name: acp_agent.permissions.plugin, config: {default: ask, tools: {bash:
ask}, defaultMode: ask}}`. It registers the `session/mode` and `permission/grant` event types, the
gate (for every agent's calls) and the policy inheritance of children (their parent's explicit
mode). A client layer installs how the user is asked (`ctx.get(PERMISSIONS).use_asker`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from acp_agent.commands.registry import COMMANDS
from acp_agent.config_dir import config_dir
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.permissions.commands import permissions_command, sandbox_command
from acp_agent.permissions.events import GrantEvent, ModeEvent
from acp_agent.permissions.policy import Policy, Rule
from acp_agent.permissions.rules import FILE_NAME, RuleFile
from acp_agent.permissions.service import PERMISSIONS, Permissions
from acp_agent.sandbox.service import SANDBOX
from acp_agent.session.persistence import SESSIONS
from acp_agent.subagents.driver import INHERIT
from acp_agent.tools.registry import TOOLS
from acp_agent.trust.service import TRUST

name = "permissions"
inject = ("sessions", "tools")


class Config(PluginConfig):
    default: Rule = "ask"
    """What happens to a call of a tool that needs approval: `ask` the user, `allow` it, `deny` it."""
    tools: dict[str, Rule] = {}
    """Per tool name, instead of `default` (tools that need no approval are never gated)."""
    default_mode: Literal["ask", "auto", "plan"] = "ask"
    """The mode of a session nobody chose one for (children do not inherit it); never Full access."""


def apply(ctx: Context, config: Config) -> Disposer:
    # Full access is offered unless the sandbox row says otherwise (its `allowFullAccess`).
    sandbox = ctx.find(SANDBOX)
    full_access = sandbox is None or sandbox.allow_full_access
    rules = RuleFile(config_dir() / FILE_NAME)
    permissions = Permissions(
        Policy(default=config.default, tools=config.tools),
        config.default_mode,
        full_access=full_access,
        rules=rules,
        settings_home=Path.home,
    )
    registry = ctx.get(SESSIONS).registry
    commands = ctx.find(COMMANDS)
    trust = ctx.find(TRUST)
    return combine(
        *([trust.add_items(permissions.trust_items)] if trust is not None else []),
        *(
            [commands.add(permissions_command(permissions)), commands.add(sandbox_command(permissions))]
            if commands
            else []
        ),
        registry.register(ModeEvent, "free"),
        registry.register(GrantEvent, "free"),
        ctx.provide(PERMISSIONS, permissions),
        ctx.get(TOOLS).gate(None, permissions.gate),
        ctx.events.on(INHERIT, permissions.inherit),
    )
