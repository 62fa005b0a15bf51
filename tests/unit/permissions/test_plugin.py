"""The loader row: its config, what it registers, and that it all goes when the context stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.kernel import LoaderError, Row, compose
from acp_agent.permissions import Permissions, Policy
from acp_agent.permissions.modes import MODE_IDS, MODES
from acp_agent.permissions.service import PERMISSIONS
from acp_agent.session.persistence import SESSIONS
from acp_agent.subagents.driver import INHERIT


def rows(tmp_path: Path, config: dict[str, object]) -> list[Row]:
    return [
        Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path)}),
        Row(id="tools", name="acp_agent.tools.plugin"),
        Row(id="permissions", name="acp_agent.permissions.plugin", config=config),
    ]


def test_the_row_provides_the_service_the_event_types_the_gate_and_the_inheritance(tmp_path: Path) -> None:
    ctx = compose(rows(tmp_path, {"default": "${PERMISSIONS_TEST_RULE:-allow}", "tools": {"bash": "ask"}}))
    permissions = ctx.get(PERMISSIONS)
    assert isinstance(permissions, Permissions)
    assert permissions.policy == Policy(default="allow", tools={"bash": "ask"})
    assert permissions.default_mode == "ask"
    assert [mode.id for mode in permissions.modes] == list(MODE_IDS) == ["ask", "auto", "plan", "full"]
    assert permissions.modes is MODES  # no sandbox row: Full access is not forbidden
    registry = ctx.get(SESSIONS).registry
    assert (registry.invariant_class("session/mode"), registry.invariant_class("permission/grant")) == ("free", "free")
    assert ctx.events.listeners(INHERIT) == [permissions.inherit]
    ctx.scope.dispose()
    assert not ctx.has(PERMISSIONS) and ctx.events.listeners(INHERIT) == []


def test_an_unknown_rule_or_mode_fails_at_load_naming_the_row(tmp_path: Path) -> None:
    with pytest.raises(LoaderError, match="loader row 'permissions'.*default"):
        compose(rows(tmp_path, {"default": "maybe"}))
    with pytest.raises(LoaderError, match="loader row 'permissions'.*defaultMode"):
        compose(rows(tmp_path, {"defaultMode": "yolo"}))
