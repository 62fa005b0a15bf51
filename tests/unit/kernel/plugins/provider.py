"""Provides `config.value` as the service `config.service`; disposing withdraws it."""

from __future__ import annotations

from acp_agent.kernel import Context, Disposer, PluginConfig, ServiceKey

name = "provider"
inject: tuple[str, ...] = ()


class Config(PluginConfig):
    service: str
    value: str


def apply(ctx: Context, config: Config) -> Disposer:
    return ctx.provide(ServiceKey[str](config.service), config.value)
