"""Approval before tools change things: session modes, the user's answers, the deployment's policy."""

from __future__ import annotations

from acp_agent.permissions.asker import OPTION_KINDS, Answer, Asker, OptionKind, PermissionRequest
from acp_agent.permissions.choices import Choices, choices
from acp_agent.permissions.errors import AskFailed, PermissionsError, UnknownMode
from acp_agent.permissions.events import GRANT_EVENT, MODE_EVENT, GrantData, GrantEvent, ModeData, ModeEvent, ModeSource
from acp_agent.permissions.modes import ASK, AUTO, MODE_IDS, MODES, PLAN, ModeId, ModeInfo
from acp_agent.permissions.policy import Policy, Refuse, Rule, decide
from acp_agent.permissions.service import Permissions

__all__ = [
    "ASK",
    "AUTO",
    "GRANT_EVENT",
    "MODES",
    "MODE_EVENT",
    "MODE_IDS",
    "OPTION_KINDS",
    "PLAN",
    "Answer",
    "AskFailed",
    "Asker",
    "Choices",
    "GrantData",
    "GrantEvent",
    "ModeData",
    "ModeEvent",
    "ModeId",
    "ModeInfo",
    "ModeSource",
    "OptionKind",
    "PermissionRequest",
    "Permissions",
    "PermissionsError",
    "Policy",
    "Refuse",
    "Rule",
    "UnknownMode",
    "choices",
    "decide",
]
