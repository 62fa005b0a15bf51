"""`Wire`: what the ACP helpers see of a connection."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from jsonrpcserver.exceptions import JsonRpcError

from acp_agent.acp.schema import CurrentModeUpdate
from acp_agent.acp.updates import UpdateMapper
from acp_agent.acp.wire import AgentWire, Wire


@dataclass
class Notes:
    sent: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))


def test_an_update_is_one_session_update_notification() -> None:
    notes = Notes()
    Wire(notes).update("s-1", CurrentModeUpdate(current_mode_id="plan"))  # type: ignore[arg-type]
    assert notes.sent == [
        (
            "session/update",
            {"sessionId": "s-1", "update": {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}},
        )
    ]


def test_an_id_not_open_here_is_minus_32002_naming_it() -> None:
    with pytest.raises(JsonRpcError) as raised:
        Wire(Notes()).session("nope")  # type: ignore[arg-type]
    assert raised.value.code == -32002 and "nope" in raised.value.message


def test_where_an_agent_shows_is_known_until_its_disposer_runs() -> None:
    wire = Wire(Notes())  # type: ignore[arg-type]
    shown = AgentWire("top", UpdateMapper(lambda name: None))
    forget = wire.show("child", shown)
    assert wire.wire_of("child") is shown and wire.wire_of("other") is None
    forget()
    assert wire.wire_of("child") is None
