"""Session configuration the user chooses: which model the agent calls (an editor's model picker)
and how hard it reasons (the thought level, for a model that declares levels).

A choice is a `session/config` event in the agent's own log (registered by the agents plugin,
invariant class "free": it may come between turns or while one runs), so a loaded session starts
where its choices left it: the choices are applied again, in order, by the same rules as live
(`with_choice`). The agent's options change at once: its next model call, and every child it
starts from then on (children inherit the parent's options), use them.

Levels follow the model: a switch keeps the current level when the new model offers it, else it
takes the new model's first (none for a model without levels).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final, Literal

from acp_agent.agent.errors import AgentError, UnknownModel, UnknownThoughtLevel
from acp_agent.agent.keys import AGENTS
from acp_agent.agent.options import AgentOptions
from acp_agent.kernel.models import Model
from acp_agent.llm.pricing import Pricing
from acp_agent.session.events import SessionEvent

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

log = logging.getLogger(__name__)

CONFIG_EVENT: Final = "session/config"
MODEL_CONFIG: Final = "model"
"""The config id of the model choice."""
THOUGHT_LEVEL_CONFIG: Final = "thought_level"
"""The config id of the reasoning effort choice."""


class ModelEntry(Model):
    """A model the user may pick: its id (what requests carry), a name and a description to show,
    whether it takes images, and the reasoning efforts it offers."""

    id: str
    name: str | None = None
    description: str | None = None
    vision: bool = False
    """Whether the model takes images: `image` prompt blocks are sent to it."""
    thought_levels: list[str] = []
    """The reasoning efforts the user may pick (each sent as the adapter's `reasoningEffort`);
    the first is the default."""
    pricing: Pricing | None = None
    """Its prices per million tokens (over the adapter row's)."""


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


def model_entry(models: Sequence[ModelEntry], model: str) -> ModelEntry:
    """The entry of `model` (a model not listed, a child's override say, declares nothing)."""
    return next((entry for entry in models if entry.id == model), ModelEntry(id=model))


def with_model(options: AgentOptions, models: Sequence[ModelEntry], model: str) -> AgentOptions:
    """`options` on `model`: the current level when that model offers it, else its first."""
    levels = model_entry(models, model).thought_levels
    level = options.reasoning_effort if options.reasoning_effort in levels else next(iter(levels), None)
    return options.model_copy(update={"model": model, "reasoning_effort": level})


def with_choice(options: AgentOptions, models: Sequence[ModelEntry], config_id: str, value: str) -> AgentOptions:
    """`options` after the user chose `value` for `config_id` (`model` or `thought_level`);
    `UnknownModel` / `UnknownThoughtLevel` for a value not offered, `AgentError` for another id."""
    if config_id == MODEL_CONFIG:
        known = [entry.id for entry in models]
        if value not in known:
            raise UnknownModel(value, known)
        return with_model(options, models, value)
    if config_id == THOUGHT_LEVEL_CONFIG:
        levels = model_entry(models, options.model).thought_levels
        if value not in levels:
            raise UnknownThoughtLevel(value, options.model, levels)
        return options.model_copy(update={"reasoning_effort": value})
    raise AgentError(f"{config_id!r} is not a session option of the agent")


def choose(agent: Agent, config_id: str, value: str) -> None:
    """The user chose `value` for `config_id`: check it, log it, then use it."""
    options = with_choice(agent.options, agent.ctx.get(AGENTS).models, config_id, value)
    agent.session.append(ConfigEvent, ConfigData(config_id=config_id, value=value))
    agent.options = options


def restored(
    options: AgentOptions, models: Sequence[ModelEntry], events: Iterable[SessionEvent], session: str
) -> AgentOptions:
    """A loaded session's options: its choices applied again, in order; a choice no longer
    offered is skipped, with a warning."""
    for event in events:
        if event.type != CONFIG_EVENT:
            continue
        data = event.data
        try:
            options = with_choice(options, models, data.config_id, data.value)
        except UnknownModel:
            log.warning(
                "session %s chose the model %r, which is no longer offered; using %r",
                session,
                data.value,
                options.model,
            )
        except UnknownThoughtLevel:
            log.warning(
                "session %s chose the thought level %r, which %r no longer offers; using %r",
                session, data.value, options.model, options.reasoning_effort,
            )  # fmt: skip
        except AgentError:
            pass  # another package's option: not the agent's to restore
    return options
