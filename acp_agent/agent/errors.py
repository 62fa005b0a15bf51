"""Errors of the agent package."""

from __future__ import annotations


class AgentError(Exception):
    """Base of the agent package's errors."""


class UnknownModel(AgentError, ValueError):
    """A model choice that is not among the configured models."""

    def __init__(self, model: str, known: list[str]) -> None:
        super().__init__(f"unknown model {model!r}; the models offered are {', '.join(map(repr, known))}")
        self.model = model
        self.known = known


class UnknownThoughtLevel(AgentError, ValueError):
    """A reasoning effort the current model does not offer."""

    def __init__(self, level: str, model: str, known: list[str]) -> None:
        offered = f"its levels are {', '.join(map(repr, known))}" if known else "it offers none"
        super().__init__(f"unknown thought level {level!r} for the model {model!r}; {offered}")
        self.level = level
        self.model = model
        self.known = known
