"""A plugin whose apply fails (a missing fixture, an unreadable file, ...)."""

from __future__ import annotations

from acp_agent.kernel import Context, PluginConfig

name = "failing"
inject: tuple[str, ...] = ()


class Config(PluginConfig):
    pass


def apply(ctx: Context, config: Config) -> None:
    raise FileNotFoundError("no such fixture")
