"""The subagents' service keys, apart from the services (the driver installs tools that use them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol

from acp_agent.kernel.context import ServiceKey

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent
    from acp_agent.subagents.background import Background  # noqa: F401 - named in a string below

BACKGROUND: Final = ServiceKey["Background"]("subagents/background")
"""`ctx.get(BACKGROUND)`: background children and their notices."""


class PermissionForwarder(Protocol):
    async def ask(self, agent: Agent, request: dict[str, Any]) -> dict[str, Any]:
        """Ask the user the `session/request_permission` params `request` of the ACP child that
        `agent` stands in for; the result to answer it with (`{"outcome": ...}`). Never raises
        but for cancellation: what cannot be asked is answered `cancelled`."""
        ...


PERMISSION_FORWARDER: Final = ServiceKey[PermissionForwarder]("subagents/permission-forwarder")
"""`ctx.get(PERMISSION_FORWARDER)`: how an ACP child's permission requests reach the user (the ACP
layer provides it; without it they are answered `cancelled`)."""
