"""The `command/reply` event: a command's answer given without the model."""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

REPLY_EVENT: Final = "command/reply"

NoticeSeverity = Literal["info", "warning", "error"]


class CommandReplyData(Model):
    turn: int
    text: str
    notice: NoticeSeverity | None = None
    """Said beside the model's words (a hook's message): a client that shows notices gets it as a
    notice of this severity, any other as the agent's message. None: the agent's message."""


class CommandReplyEvent(SessionEvent):
    """`command/reply`: what a command answered itself, shown as the agent's message; never seen
    by the model. Written `ignorable`, so a composition without commands still loads the log."""

    type: Literal["command/reply"] = REPLY_EVENT
    data: CommandReplyData
