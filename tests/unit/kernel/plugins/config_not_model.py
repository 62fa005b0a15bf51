"""A plugin whose `Config` is a class but not a pydantic model."""

from __future__ import annotations

from typing import Any

name = "config_not_model"


class Config:
    label: str = ""


def apply(ctx: Any, config: Any) -> None:
    return None
