"""What a plugin module looks like to the loader."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Disposer


class PluginConfig(BaseModel):
    """Base of plugin configs: keys in camelCase (or snake_case); an unknown key is an error, so a
    typo fails at load."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


@runtime_checkable
class Plugin(Protocol):
    """A module with `name`, `inject` (services it needs), `Config` and `apply(ctx, config)`.

    `apply` registers what the plugin contributes and returns a disposer (or None) that undoes it.
    """

    name: str
    inject: tuple[str, ...]
    Config: type[BaseModel]

    def apply(self, ctx: Context, config: Any) -> Disposer | None: ...


def plugin_problem(module: ModuleType) -> str | None:
    """Why `module` is not a plugin, or None when it is one."""
    for attribute in ("name", "Config", "apply"):
        if not hasattr(module, attribute):
            return f"module {module.__name__!r} is not a plugin: it has no {attribute!r}"
    if not (isinstance(module.Config, type) and issubclass(module.Config, BaseModel)):
        return f"module {module.__name__!r} is not a plugin: its Config is not a pydantic model"
    return None
