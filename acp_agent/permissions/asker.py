"""How the user is asked: an interface the client layer implements (ACP: `session/request_permission`).

The permissions package never talks to a client itself; the layer that knows the client installs an
`Asker` (`Permissions.use_asker`), offers the request's `options()` and answers with the id of the
option the user picked, or `cancelled` when the prompt turn was cancelled before the user answered.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Final, Literal, NamedTuple

from acp_agent.permissions import texts
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.pipeline import PreparedCall

OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
OptionId = OptionKind | Literal["allow_server_always", "allow_scope_always", "allow_prefix", "reject_prefix"]
Answer = OptionId | Literal["cancelled"]

OPTION_KINDS: Final[tuple[OptionKind, ...]] = ("allow_once", "allow_always", "reject_once", "reject_always")
"""The options every request offers, in the order they are shown (each option's id is its kind)."""
SERVER_ALWAYS: Final = "allow_server_always"
"""The fifth option of a request for an MCP server's tool: allow every tool of that server."""
PREFIX_OPTIONS: Final[tuple[tuple[OptionId, OptionKind], ...]] = (
    ("allow_prefix", "allow_always"),
    ("reject_prefix", "reject_always"),
)
"""The options of an ordinary command's request that save a rule for the project."""
SCOPE_ALWAYS: Final = "allow_scope_always"
"""The fifth option of a request for a call with a grant scope: allow its scope (web_fetch: the
host) for good."""


class Option(NamedTuple):
    id: OptionId
    kind: OptionKind
    name: str


class PermissionRequest(NamedTuple):
    """A call waiting for the user's approval."""

    session_id: str
    """The session of the agent that made the call (a child's, for a subagent's call)."""
    route: str
    """That agent's route."""
    call: PreparedCall
    """The call: its block (id, name, raw arguments), its tool and validated params."""
    context: ToolCallContext
    """What the call would run with (the asker previews its change through it)."""
    escalation: bool = False
    """The call asks to run its command outside the sandbox: it may be allowed once, never always."""
    prefix: str | None = None
    """The command prefix an "always" rule for the project would save (`rules.command_prefix`)."""

    @property
    def tool(self) -> str:
        return self.call.block.name

    @property
    def server(self) -> str | None:
        """The MCP server of the tool, when it is one's."""
        return self.call.tool.server if self.call.tool is not None else None

    def options(self) -> list[Option]:
        """What the user may answer, in the order shown."""
        if self.escalation:
            return [Option(kind, kind, texts.escalation_option_name(kind)) for kind in ("allow_once", "reject_once")]
        options = [Option(kind, kind, texts.option_name(kind, self.tool)) for kind in OPTION_KINDS]
        if self.server is not None:
            options.insert(2, Option(SERVER_ALWAYS, "allow_always", texts.server_option_name(self.server)))
        scope = (
            self.call.tool.grant_scope(self.call.params)
            if self.call.tool is not None and self.call.params is not None
            else None
        )
        if scope is not None:
            options.insert(2, Option(SCOPE_ALWAYS, "allow_always", scope.label))
        if self.prefix is not None:
            allow, reject = (
                Option(id, kind, texts.prefix_option_name(kind, self.prefix)) for id, kind in PREFIX_OPTIONS
            )
            options[2:2] = [allow]
            options.append(reject)
        return options


class Asker(ABC):
    """Asks the user whether a call may run."""

    @abstractmethod
    async def ask(self, request: PermissionRequest) -> Answer:
        """The id of the option the user picked, or `cancelled`. Raise `AskFailed` when the user
        cannot be asked (the client refused the request or went away). Cancellation propagates."""
