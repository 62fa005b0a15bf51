"""Slash commands: the list a session offers (`ctx.get(COMMANDS)`), the built-ins, the user's command
files, and the sender of the list to the client."""

from __future__ import annotations

from acp_agent.commands.announce import Announcer
from acp_agent.commands.builtins import BUILTINS, INIT, answer, reply
from acp_agent.commands.events import REPLY_EVENT, CommandReplyData, CommandReplyEvent
from acp_agent.commands.files import CommandFile, command_files, read_command_file
from acp_agent.commands.registry import COMMANDS, Command, CommandRegistry, CommandRun, Invocation

__all__ = [
    "BUILTINS",
    "COMMANDS",
    "INIT",
    "REPLY_EVENT",
    "Announcer",
    "Command",
    "CommandFile",
    "CommandRegistry",
    "CommandReplyData",
    "CommandReplyEvent",
    "CommandRun",
    "Invocation",
    "answer",
    "command_files",
    "read_command_file",
    "reply",
]
