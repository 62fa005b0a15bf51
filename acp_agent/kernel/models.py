"""The base model every boundary type derives from: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Model(BaseModel):
    """A pydantic model whose JSON form uses camelCase keys and omits unset optional fields."""

    # defer_build: a model's validator is built on first use, not at import (start-up time).
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready dict: aliases, no `None` fields."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")
