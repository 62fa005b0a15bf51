"""Loader plugin providing `ctx.get(TRUST)`: the trust question of a project's runnable files.

Row: `{id: trust, name: acp_agent.trust.plugin}`, after `commands` (for `/trust`) and before the
rows that need trust (`hooks`, ...).
"""

from __future__ import annotations

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.trust.service import TRUST, Trust
from acp_agent.trust.store import TrustStore

name = "trust"
inject = ()


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.provide(TRUST, Trust(ctx, TrustStore()))
