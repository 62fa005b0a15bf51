"""SKILL.md files of Claude Code and Codex: a catalog for the model, a `skill` tool, `/<name>`."""

from acp_agent.skills.files import Skill, find_skills, read_skill, skill_roots
from acp_agent.skills.service import SKILLS, Skills, SkillTool

__all__ = ["SKILLS", "Skill", "SkillTool", "Skills", "find_skills", "read_skill", "skill_roots"]
