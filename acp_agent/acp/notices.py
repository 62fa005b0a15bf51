"""What the user is told beside the model's words (a trust answer, a hook's message): the one rule
for saying it. A client that shows notices (`session.notices`) gets a `notice`; any other client
an agent message, a paragraph of its own, so it never runs into the model's text."""

from __future__ import annotations

from acp_agent.acp.schema import ContentChunk, Notice, SessionUpdate, Text
from acp_agent.commands.events import NoticeSeverity
from acp_agent.mcp import texts as mcp_texts
from acp_agent.mcp.events import StatusData


def told(text: str, *, notices: bool, severity: NoticeSeverity = "warning") -> Notice | ContentChunk:
    """The update that tells the user `text`: a notice of `severity` to a client that shows
    notices (`notices`), else an agent message."""
    if notices:
        return Notice(severity=severity, title=text)
    return ContentChunk(session_update="agent_message_chunk", content=Text(text=f"{text}\n\n"))


class NoticeQueue:
    """What an agent's session is told of its MCP servers that could not start. A client that
    shows notices gets a `notice` at once; any other an agent message that begins a model call's
    step: at once when the step is open and has not streamed yet (the first prompt's call waits
    for servers still starting, so a failure at start-up begins the first answer), else at the
    next step. `live`: false for a replay, which tells none of it (it was news then)."""

    __slots__ = ("notices", "_live", "_untold", "_step_unanswered")

    def __init__(self, *, notices: bool, live: bool = True) -> None:
        self.notices = notices
        self._live = live
        self._untold: list[str] = []
        """Failures to say at the next model step."""
        self._step_unanswered = False
        """A model step is open and its call has streamed nothing yet: a failure is said at once."""

    def server_failed(self, status: StatusData) -> SessionUpdate | None:
        if status.state != "failed" or not self._live:
            return None
        title = mcp_texts.could_not_start(status.server)
        if self.notices:
            return Notice(severity="warning", title=title, description=status.error)
        said = f"{title}: {status.error}\n\n"  # a paragraph, apart from what the model says next
        if self._step_unanswered:
            return ContentChunk(session_update="agent_message_chunk", content=Text(text=said))
        self._untold.append(said)
        return None

    def step_started(self) -> SessionUpdate | None:
        """A model step opened: what waited for it, as one agent message."""
        self._step_unanswered = True
        if not self._untold:
            return None
        text = "".join(self._untold)
        self._untold.clear()
        return ContentChunk(session_update="agent_message_chunk", content=Text(text=text))

    def step_answered(self) -> None:
        """The step's call answered, or the step ended: a failure now waits for the next step."""
        self._step_unanswered = False
