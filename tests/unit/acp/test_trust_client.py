"""The trust question over ACP when there is nobody to ask: no trust service, a closed session,
a cancelled or unexpected answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from acp_agent.acp.trust_client import AcpTrustAsker, install
from acp_agent.acp.wire import Wire
from acp_agent.kernel import Context
from acp_agent.trust import TrustQuestion
from tests.unit.acp.fakes import FakeConnection

pytestmark = pytest.mark.anyio


class Closed:
    """An agent whose session is not open on the connection."""

    id = "gone"


def test_without_a_trust_service_nothing_is_installed() -> None:
    install(Context(), Wire(cast(Any, FakeConnection())))()


async def test_a_session_no_longer_open_is_not_asked_nor_told() -> None:
    connection = FakeConnection()
    asker = AcpTrustAsker(Wire(cast(Any, connection)))
    agent = cast(Any, Closed())
    assert await asker.ask(agent, TrustQuestion(Path("/p"), ())) == "cancelled"
    asker.tell(agent, "not trusted")
    assert connection.requests == []
