"""Session configuration the user chooses: which model the agent calls (an editor's model picker).

A choice is a `session/config` event in the agent's own log (registered by the agents plugin,
invariant class "free": it may come between turns or while one runs), so a loaded session starts
with its last choice. The agent's options change at once: its next model call, and every child it
starts from then on (children inherit the parent's options), use the chosen model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final, Literal

from acp_agent.agent.errors import UnknownModel
from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent
from acp_agent.agent.keys import AGENTS

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

CONFIG_EVENT: Final = "session/config"
MODEL_CONFIG: Final = "model"
"""The config id of the model choice."""


class ModelEntry(Model):
    """A model the user may pick: its id (what requests carry), a name and a description to show."""

    id: str
    name: str | None = None
    description: str | None = None


class ConfigData(Model):
    config_id: str
    value: str


class ConfigEvent(SessionEvent):
    """`session/config`: the user chose `value` for the session option `config_id`."""

    type: Literal["session/config"] = CONFIG_EVENT
    data: ConfigData


def offered(default: str, models: Sequence[ModelEntry]) -> list[ModelEntry]:
    """The models a session offers: the configured list, with the default model first when the list
    does not name it (so the model an agent starts with is always one it offers)."""
    if any(entry.id == default for entry in models):
        return list(models)
    return [ModelEntry(id=default), *models]


def chosen(events: Iterable[SessionEvent], config_id: str) -> str | None:
    """The last value chosen for `config_id` in a log, or None."""
    value = None
    for event in events:
        if event.type == CONFIG_EVENT and event.data.config_id == config_id:
            value = event.data.value
    return value


def choose_model(agent: Agent, model: str) -> None:
    """Switch `agent` to `model` (one of `ctx.get(AGENTS).models`): log the choice, then use it."""
    known = [entry.id for entry in agent.ctx.get(AGENTS).models]
    if model not in known:
        raise UnknownModel(model, known)
    agent.session.append(CONFIG_EVENT, ConfigData(config_id=MODEL_CONFIG, value=model))
    agent.options = agent.options.model_copy(update={"model": model})
