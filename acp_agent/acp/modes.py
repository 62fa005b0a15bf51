"""Session modes and config options over ACP: what `session/new`, `session/load` and `session/resume`
advertise, `session/set_mode` and `session/set_config_option`.

The modes (`ask`, `auto`, `plan`) are the permissions service's, offered only when the composition
has one. The config options are a `mode` select (category `mode`: the same modes, for clients that
prefer config options, which ACP says they should), a `model` select (category `model`: the
agents row's models, current = the agent's model) and, when the current model declares
`thoughtLevels`, a `thought_level` select (category `thought_level`: those levels, current = the
agent's reasoning effort). Both methods change the same state, so both views stay in step: a mode
change sends `current_mode_update` and `config_option_update`, a model or level change
`config_option_update` (after a model switch it lists the new model's levels, or none); each is
logged in the session (`session/mode`, `session/config`).

A loaded or resumed session answers with the mode, model and level it was left with; the replay
does not repeat earlier switches (they are settings, not conversation), the response is the last
word.
"""

from __future__ import annotations

from typing import Any

from acp_agent.acp import errors
from acp_agent.acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionParams,
    SetSessionConfigOptionResult,
    SetSessionModeParams,
)
from acp_agent.acp.wire import Wire
from acp_agent.agent.agent import Agent
from acp_agent.agent.config import MODEL_CONFIG, THOUGHT_LEVEL_CONFIG, choose, model_entry
from acp_agent.agent.errors import UnknownModel, UnknownThoughtLevel
from acp_agent.agent.keys import AGENTS
from acp_agent.kernel.context import Context
from acp_agent.permissions.errors import UnknownMode
from acp_agent.permissions.service import PERMISSIONS

MODE_CONFIG = "mode"


def session_state(ctx: Context, agent: Agent) -> dict[str, Any]:
    """The `modes` and `configOptions` of a session response (as keyword arguments)."""
    return {"modes": mode_state(ctx, agent), "config_options": config_options(ctx, agent)}


def mode_state(ctx: Context, agent: Agent) -> SessionModeState | None:
    permissions = ctx.find(PERMISSIONS)
    if permissions is None:
        return None
    return SessionModeState(
        current_mode_id=permissions.mode(agent),
        available_modes=[SessionMode(id=m.id, name=m.name, description=m.description) for m in permissions.modes],
    )


def config_options(ctx: Context, agent: Agent) -> list[SessionConfigSelect]:
    options = []
    modes = mode_state(ctx, agent)
    if modes is not None:
        options.append(
            SessionConfigSelect(
                id=MODE_CONFIG,
                name="Mode",
                description="How much the agent may do without asking you",
                category="mode",
                current_value=modes.current_mode_id,
                options=[
                    SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                    for m in modes.available_modes
                ],
            )
        )
    options.append(
        SessionConfigSelect(
            id=MODEL_CONFIG,
            name="Model",
            category="model",
            current_value=agent.options.model,
            options=[
                SessionConfigSelectOption(value=m.id, name=m.name or m.id, description=m.description)
                for m in ctx.get(AGENTS).models
            ],
        )
    )
    levels = model_entry(ctx.get(AGENTS).models, agent.options.model).thought_levels
    if levels:
        options.append(
            SessionConfigSelect(
                id=THOUGHT_LEVEL_CONFIG,
                name="Reasoning effort",
                description="How hard the model thinks before it answers",
                category="thought_level",
                current_value=agent.options.reasoning_effort or levels[0],
                options=[SessionConfigSelectOption(value=level, name=level) for level in levels],
            )
        )
    return options


async def set_mode(wire: Wire, params: SetSessionModeParams) -> dict[str, Any]:
    agent = wire.session(params.session_id).agent
    _switch_mode(agent, params.mode_id, "modeId")
    wire.update(agent.id, CurrentModeUpdate(current_mode_id=params.mode_id))
    wire.update(agent.id, ConfigOptionUpdate(config_options=config_options(agent.ctx, agent)))
    return {}


async def set_config_option(wire: Wire, params: SetSessionConfigOptionParams) -> SetSessionConfigOptionResult:
    agent = wire.session(params.session_id).agent
    offered = {option.id: option for option in config_options(agent.ctx, agent)}
    option = offered.get(params.config_id)
    if option is None:
        known = ", ".join(map(repr, offered))
        raise errors.invalid_params(f"configId {params.config_id!r} is not a config option of this session ({known})")
    value = params.value
    if isinstance(value, bool):
        values = ", ".join(repr(choice.value) for choice in option.options)
        raise errors.invalid_params(
            f"value: {option.id!r} is a select option, set to one of its values ({values}), not to {str(value).lower()}"
        )
    if option.id == MODE_CONFIG:
        _switch_mode(agent, value, "value")
        wire.update(agent.id, CurrentModeUpdate(current_mode_id=value))
    else:  # the model or the reasoning effort
        try:
            choose(agent, option.id, value)
        except (UnknownModel, UnknownThoughtLevel) as exc:
            raise errors.invalid_params(f"value: {exc}") from None
    options = config_options(agent.ctx, agent)
    wire.update(agent.id, ConfigOptionUpdate(config_options=options))
    return SetSessionConfigOptionResult(config_options=options)


def _switch_mode(agent: Agent, mode_id: str, field: str) -> None:
    permissions = agent.ctx.find(PERMISSIONS)
    if permissions is None:
        raise errors.invalid_params(f"{field}: this agent offers no session modes")
    try:
        permissions.set_mode(agent, mode_id)
    except UnknownMode as exc:
        raise errors.invalid_params(f"{field}: {exc}") from None
