"""Skill files: `<dir>/<name>/SKILL.md` with a YAML front-matter (`name`, `description`, optional
`disable-model-invocation`, `user-invocable`) and the instructions after it.

Searched, first found wins on a name: `<project>/.agents/skills`, `<project>/.claude/skills`,
`~/.agents/skills`, `~/.claude/skills`. A project's file is read only inside the project (a link
leading out of it is not followed), and only a regular file of at most `FILE_LIMIT` bytes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_agent.commands.files import FILE_LIMIT, NAME, FrontMatterError, split_front_matter
from acp_agent.tools.confined import project_file_head, user_file_head
from acp_agent.tools.errors import OutsideWorkspace

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
DIRECTORIES = (Path(".agents") / "skills", Path(".claude") / "skills")
"""Where skills live, under the project and under the home directory, in precedence order."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    directory: Path
    body: str
    model_invocable: bool = True
    """False: `disable-model-invocation: true`: only the user runs it (`/<name>`)."""
    user_invocable: bool = True


def skill_roots(cwd: Path | None, home: Path) -> list[tuple[Path, Path | None]]:
    """Each skills directory, with the project its files must stay in (None: the user's own)."""
    roots: list[tuple[Path, Path | None]] = []
    if cwd is not None:
        roots += [(cwd / directory, cwd) for directory in DIRECTORIES]
    return roots + [(home / directory, None) for directory in DIRECTORIES]


def find_skills(cwd: Path | None, home: Path) -> dict[str, Skill]:
    """The skills by name; unreadable or invalid ones are left out with a warning."""
    found: dict[str, Skill] = {}
    for root, project in skill_roots(cwd, home):
        try:
            directories = sorted(path for path in root.iterdir() if (path / SKILL_FILE).exists())
        except OSError:  # no such directory (the usual case), or one we may not read
            continue
        for directory in directories:
            skill = read_skill(directory / SKILL_FILE, project)
            if skill is not None and skill.name not in found:
                found[skill.name] = skill
    return found


def read_skill(path: Path, project: Path | None) -> Skill | None:
    try:
        data, size = (
            project_file_head(project, path, FILE_LIMIT + 1) if project else user_file_head(path, FILE_LIMIT + 1)
        )
        if size > FILE_LIMIT:
            raise OSError(f"{size} bytes, more than a skill's {FILE_LIMIT}")
        meta, body = split_front_matter(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, OutsideWorkspace, FrontMatterError) as exc:
        log.warning("ignoring the skill %s: %s", path, exc)
        return None
    name = _text(meta.get("name")) or path.parent.name
    body = body.strip()
    if not NAME.fullmatch(name) or not body:
        log.warning("ignoring the skill %s: it needs a name without spaces or slashes, and instructions", path)
        return None
    description = _text(meta.get("description")) or body.splitlines()[0].lstrip("#").strip()
    return Skill(
        name=name,
        description=description,
        directory=path.parent,
        body=body,
        model_invocable=meta.get("disable-model-invocation") is not True,
        user_invocable=meta.get("user-invocable") is not False,
    )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
