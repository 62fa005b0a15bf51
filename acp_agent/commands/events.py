"""The `command/reply` event: a command's answer given without the model."""

from __future__ import annotations

from typing import Final, Literal

from acp_agent.kernel.models import Model
from acp_agent.session.events import SessionEvent

REPLY_EVENT: Final = "command/reply"


class CommandReplyData(Model):
    turn: int
    text: str


class CommandReplyEvent(SessionEvent):
    """`command/reply`: what a command answered itself, shown as the agent's message; never seen
    by the model. Written `ignorable`, so a composition without commands still loads the log."""

    type: Literal["command/reply"] = REPLY_EVENT
    data: CommandReplyData
