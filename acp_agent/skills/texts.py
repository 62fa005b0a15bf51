"""Every model-visible text of the skills package, and the limits they name."""

from __future__ import annotations

from typing import Final

from acp_agent.skills.files import Skill

SKILLS_ORDER: Final = 20
"""The catalog's place in the system prompt: after the project instructions (10)."""
DESCRIPTION_LIMIT: Final = 1024
"""Characters of a skill's description the catalog shows."""
CATALOG_LIMIT: Final = 16 * 1024
"""Characters the whole catalog may take; skills past it are counted, not listed."""
TOOL_DESCRIPTION: Final = (
    "Load a skill: its instructions, to follow for the task at hand, and the directory holding its "
    "other files. Call it when a skill of the catalog in your instructions fits the task."
)


def catalog(skills: list[Skill]) -> str:
    """The section listing the skills the model may load (name and description), bounded."""
    head = "# Skills\n\nLoad one with the `skill` tool when it fits the task:\n"
    lines: list[str] = []
    size = len(head)
    for index, skill in enumerate(skills):
        description = skill.description[:DESCRIPTION_LIMIT]
        line = f"- {skill.name}: {description}"
        if size + len(line) + 1 > CATALOG_LIMIT:
            lines.append(f"- ... {len(skills) - index} more skills not listed")
            break
        lines.append(line)
        size += len(line) + 1
    return head + "\n".join(lines)


def loaded(skill: Skill) -> str:
    return f"Skill `{skill.name}` (its files are in {skill.directory}):\n\n{skill.body}"


def unknown(name: str, known: list[str]) -> str:
    return f"there is no skill '{name}'; the skills are: {', '.join(known) or 'none'}"


SKILL_HINT: Final = "what the skill should work on (optional)"
