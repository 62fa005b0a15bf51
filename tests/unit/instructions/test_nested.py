"""Local overlays beside a directory's instructions, and the subdirectories on the way to a file."""

from __future__ import annotations

from pathlib import Path

from acp_agent.instructions.files import directory_files, nested_files


def test_overlays_need_a_main_file(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.local.md").write_text("mine", encoding="utf-8")
    assert directory_files(tmp_path) == []
    (tmp_path / "CLAUDE.md").write_text("theirs", encoding="utf-8")
    assert directory_files(tmp_path) == [tmp_path / "CLAUDE.md", tmp_path / "CLAUDE.local.md"]


def test_the_subdirectories_on_the_way_to_a_file(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "AGENTS.md").write_text("b", encoding="utf-8")
    assert nested_files(tmp_path, tmp_path / "a" / "b" / "f.py") == [
        (tmp_path / "a" / "b", [tmp_path / "a" / "b" / "AGENTS.md"])
    ]
    assert nested_files(tmp_path, tmp_path / "f.py") == []
    assert nested_files(tmp_path / "a", tmp_path / "elsewhere.py") == []
