"""How the user is asked: an interface the client layer implements (ACP: `session/request_permission`).

The permissions package never talks to a client itself; the layer that knows the client installs an
`Asker` (`Permissions.use_asker`) and answers with one of the option kinds the user picked, or
`cancelled` when the prompt turn was cancelled before the user answered.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Final, Literal

from acp_agent.tools.pipeline import PreparedCall

OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
Answer = OptionKind | Literal["cancelled"]

OPTION_KINDS: Final[tuple[OptionKind, ...]] = ("allow_once", "allow_always", "reject_once", "reject_always")
"""The options every request offers, in the order they are shown."""


@dataclass(frozen=True)
class PermissionRequest:
    """A call waiting for the user's approval."""

    session_id: str
    """The session of the agent that made the call (a child's, for a subagent's call)."""
    route: str
    """That agent's route."""
    call: PreparedCall
    """The call: its block (id, name, raw arguments), its tool and validated params."""

    @property
    def tool(self) -> str:
        return self.call.block.name


class Asker(ABC):
    """Asks the user whether a call may run."""

    @abstractmethod
    async def ask(self, request: PermissionRequest) -> Answer:
        """The kind of the option the user picked, or `cancelled`. Raise `AskFailed` when the user
        cannot be asked (the client refused the request or went away). Cancellation propagates."""
