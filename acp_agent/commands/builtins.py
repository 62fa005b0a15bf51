"""The built-in command `/init`, and the turn bodies commands answer with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_agent.commands import texts
from acp_agent.commands.events import CommandReplyData, CommandReplyEvent
from acp_agent.commands.registry import Command, Invocation
from acp_agent.session.content import TextContent
from acp_agent.session.events import COMMAND_SOURCE, TurnCompleted, TurnEndReason
from acp_agent.session.titles import TitleData, TitleEvent, one_line

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket, TurnBody


def reply(text: str) -> TurnBody:
    """A turn body that answers `text` as the agent's message (a `command/reply` event) without
    calling the model."""

    async def body(agent: Agent, turn: int) -> TurnEndReason:
        agent.session.append(CommandReplyEvent, CommandReplyData(turn=turn, text=text), ignorable=True)
        return TurnCompleted()

    return body


def answer(invocation: Invocation, text: str) -> Ticket:
    """Queue a turn that logs the command as typed (source `command`: never seen by the model,
    never a title) and answers `text` without the model."""
    return invocation.followup(invocation.content, COMMAND_SOURCE, reply(text))


def _init(invocation: Invocation) -> Ticket:
    prompt = texts.INIT_PROMPT + (f"\n\n{invocation.arguments}" if invocation.arguments else "")
    return invocation.followup([TextContent(text=prompt), *invocation.attachments])


def _rename(invocation: Invocation) -> Ticket:
    title = one_line(invocation.arguments)
    if title is None:
        return answer(invocation, texts.RENAME_USAGE)
    answered = reply(texts.renamed(title))

    async def body(agent: Agent, turn: int) -> TurnEndReason:
        agent.session.append(TitleEvent, TitleData(title=title, source="user"))
        return await answered(agent, turn)

    return invocation.followup(invocation.content, COMMAND_SOURCE, body)


INIT = Command("init", texts.INIT_DESCRIPTION, _init)
"""`/init`: a model turn with `texts.INIT_PROMPT`, which writes an AGENTS.md."""
RENAME = Command("rename", texts.RENAME_DESCRIPTION, _rename, texts.RENAME_INPUT_HINT)
"""`/rename <title>`: names the session as `session/set_title` does, without the model."""
BUILTINS = (INIT, RENAME)
"""`/compact` is the compaction plugin's (`acp_agent.compaction`)."""
