"""Finding SKILL.md files: precedence, the front-matter, and every file left out."""

from __future__ import annotations

import os
from pathlib import Path

from acp_agent.commands.files import FILE_LIMIT
from acp_agent.skills import Skill, find_skills, read_skill, skill_roots, texts


def write(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(text, encoding="utf-8")
    return directory / "SKILL.md"


def test_the_project_comes_first_then_the_home(tmp_path: Path) -> None:
    roots = [
        (root.relative_to(tmp_path), project is not None)
        for root, project in skill_roots(tmp_path / "p", tmp_path / "h")
    ]
    assert roots == [
        (Path("p/.agents/skills"), True),
        (Path("p/.claude/skills"), True),
        (Path("h/.agents/skills"), False),
        (Path("h/.claude/skills"), False),
    ]
    assert len(skill_roots(None, tmp_path)) == 2


def test_a_skill_without_front_matter_takes_its_directory_name_and_first_line(tmp_path: Path) -> None:
    path = write(tmp_path / "lint", "# Run the linter\nThen fix what it says.\n")
    assert read_skill(path, tmp_path) == Skill(
        "lint", "Run the linter", tmp_path / "lint", "# Run the linter\nThen fix what it says."
    )


def test_invalid_skills_are_left_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / ".claude" / "skills"
    write(root / "spaced", "---\nname: two words\n---\nBody.\n")
    write(root / "empty", "---\ndescription: nothing\n---\n")
    write(root / "yaml", "---\n: [\n---\nBody.\n")
    write(root / "large", "x" * (FILE_LIMIT + 1))
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"\xff\xfe")
    write(root / "good", "Good.\n")
    assert list(find_skills(None, home)) == ["good"]


def test_a_project_skill_linking_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", "Secret instructions.\n")
    project = tmp_path / "project"
    (project / ".claude" / "skills" / "x").mkdir(parents=True)
    os.symlink(outside, project / ".claude" / "skills" / "x" / "SKILL.md")
    assert find_skills(project, tmp_path / "home") == {}


def test_the_catalog_is_bounded() -> None:
    many = [Skill(f"s{i}", "d" * 2000, Path("/x"), "b") for i in range(40)]
    catalog = texts.catalog(many)
    assert len(catalog) <= texts.CATALOG_LIMIT + 100
    assert "- s0: " + "d" * texts.DESCRIPTION_LIMIT + "\n" in catalog
    assert catalog.endswith("more skills not listed")
