"""What the user is told beside the model's words (a trust answer, a hook's message): the one rule
for saying it. A client that shows notices (`session.notices`) gets a `notice`; any other client
an agent message, a paragraph of its own, so it never runs into the model's text."""

from __future__ import annotations

from acp_agent.acp.schema import ContentChunk, Notice, Text
from acp_agent.commands.events import NoticeSeverity


def told(text: str, *, notices: bool, severity: NoticeSeverity = "warning") -> Notice | ContentChunk:
    """The update that tells the user `text`: a notice of `severity` to a client that shows
    notices (`notices`), else an agent message."""
    if notices:
        return Notice(severity=severity, title=text)
    return ContentChunk(session_update="agent_message_chunk", content=Text(text=f"{text}\n\n"))
