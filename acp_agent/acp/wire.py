"""What the ACP helpers see of one client connection: the `Wire`.

The server (`server.AcpServer`) holds the methods; the helpers that serve it (`client_services`,
`permission_client`, `modes`) are handed this narrower object instead: the connection, what the
client advertised, the sessions open on it, where each agent's activity shows, and the one way a
`session/update` goes out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from acp_agent.acp import errors
from acp_agent.acp.children import ChildSession, Frame
from acp_agent.acp.connection import Connection
from acp_agent.acp.schema import ClientCapabilities, SessionUpdate
from acp_agent.acp.updates import ShownText, UpdateFrames, UpdateMapper
from acp_agent.kernel.scope import Disposer, Removal

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket
    from acp_agent.commands.announce import Announcer


@dataclass(eq=False)
class AcpSession:
    """A top-level agent shown to the client as a session."""

    agent: Agent
    commands: Announcer | None = None
    """Sends the session's slash commands (None in a composition without `ctx.get(COMMANDS)`)."""
    prompts: dict[Ticket, int] = field(default_factory=dict)
    """The prompts waiting for their answer, by ticket: where each was read (`Connection.read_at`)."""
    cancelled_at: int = -1
    """Where the latest `session/cancel` handled for the session was read (-1: none yet)."""
    closed_at: int | None = None
    """Where the first `session/close` of the session was read, once one is being handled."""


@dataclass(eq=False)
class AgentWire:
    """Where one agent's activity shows on the connection."""

    session_id: str
    """The session on the wire (a child's: its own for a client with child sessions, else its
    top-level session)."""
    mapper: UpdateMapper
    """How its events become updates (its calls' wire ids, a child's `_meta`)."""
    child: ChildSession | None = None
    """Set for a child shown as a child session (the client advertised `subagents`)."""
    children: dict[str, ChildSession] = field(default_factory=dict)
    """The child sessions its running calls started, by call id."""
    frames: UpdateFrames = field(init=False)
    """The encoded frames of `session_id` (a streamed chunk's is built from its text)."""

    def __post_init__(self) -> None:
        self.frames = UpdateFrames(self.session_id)


class Wire:
    """One client connection as the ACP helpers use it."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        """For the requests the helpers make of the client (`fs/*`, `terminal/*`, approvals)."""
        self.client = ClientCapabilities()
        """What the client advertised in `initialize` (nothing until then): read at each use."""
        self.sessions: dict[str, AcpSession] = {}
        """The sessions open on this connection, by id."""
        self.child_ids: set[str] = set()
        """The children this connection has shown live, and the stored descendants of the sessions
        it loaded or resumed: they take only `session/cancel`."""
        self._shown: dict[str, AgentWire] = {}

    def session(self, session_id: str) -> AcpSession:
        """The open session of that id, for a request about it; -32002 naming an unknown one or
        one whose `session/close` was read before this request (the close may still wait for its
        turn to end), -32602 for a child's (it takes only `session/cancel`)."""
        entry = self.sessions.get(session_id)
        if entry is None or (entry.closed_at is not None and entry.closed_at < Connection.read_at()):
            if session_id in self.child_ids:
                raise errors.subagent_session(session_id)
            raise errors.session_not_found(session_id)
        return entry

    def update(self, session_id: str, update: SessionUpdate) -> None:
        """Queue one `session/update` notification: the only way one goes out, with `chunk`. Its
        params are `SessionNotification`'s, joined from the update's own dump: the update is a
        model already, and the notification's validator (every update type's) would be built for
        the first update, the command list a new session announces."""
        self.conn.notify("session/update", {"sessionId": session_id, "update": update.dump()})

    def chunk(self, shown_on: AgentWire, shown: ShownText) -> None:
        """Queue the `session/update` of one streamed chunk of an agent's text (the hot path: its
        frame is built from the text, see `UpdateFrames`)."""
        self.conn.send(shown_on.frames.text(shown))

    def send(self, frames: Iterable[Frame]) -> None:
        """Queue updates, each on its own session, in order (through `update`)."""
        for session_id, update in frames:
            self.update(session_id, update)

    def show(self, agent_id: str, shown: AgentWire) -> Disposer:
        """Record where an agent's activity shows (the server does, when it starts forwarding
        it); the disposer forgets it."""
        self._shown[agent_id] = shown
        return Removal(self._shown, agent_id)

    def wire_of(self, agent_id: str) -> AgentWire | None:
        """Where an agent's activity shows, or None for an agent this connection does not show."""
        return self._shown.get(agent_id)
