"""Project instructions: the AGENTS.md files of the user and of the workspace, as one
system-prompt section of every agent, re-read before each turn and logged when they change."""

from __future__ import annotations

from acp_agent.instructions.events import INSTRUCTIONS_EVENT, InstructionFile, InstructionsData, InstructionsEvent
from acp_agent.instructions.files import (
    FALLBACK,
    FILE_LIMIT,
    NAME,
    TOTAL_LIMIT,
    Instructions,
    ShownFile,
    instruction_files,
    project_root,
    read_instructions,
)
from acp_agent.instructions.plugin import ProjectInstructions, last_logged

__all__ = [
    "FALLBACK",
    "FILE_LIMIT",
    "INSTRUCTIONS_EVENT",
    "NAME",
    "TOTAL_LIMIT",
    "InstructionFile",
    "Instructions",
    "InstructionsData",
    "InstructionsEvent",
    "ProjectInstructions",
    "ShownFile",
    "instruction_files",
    "project_root",
    "last_logged",
    "read_instructions",
]
