"""Records its applied config and its disposal in the `log` service (a list)."""

from __future__ import annotations

from acp_agent.kernel import Context, Disposer, PluginConfig, ServiceKey

LOG = ServiceKey[list[object]]("log")

name = "recorder"
inject = ("log",)


class Config(PluginConfig):
    label: str
    count: int = 1
    tags: list[str] = []
    extra: dict[str, str] = {}


def apply(ctx: Context, config: Config) -> Disposer:
    log = ctx.get(LOG)
    log.append(("apply", config))
    return lambda: log.append(("dispose", config.label))
