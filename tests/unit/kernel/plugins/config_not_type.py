"""A plugin whose `Config` is not even a class."""

from __future__ import annotations

from typing import Any

name = "config_not_type"
Config: Any = {"label": str}


def apply(ctx: Any, config: Any) -> None:
    return None
