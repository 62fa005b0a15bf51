"""Which instruction files apply to a working directory, and the section they make."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from acp_agent.instructions import texts

log = logging.getLogger(__name__)

NAME = "AGENTS.md"
FALLBACK = "CLAUDE.md"
"""Read in a project directory that has no AGENTS.md (users moving over from Claude Code)."""
FILE_LIMIT = 32 * 1024
"""Bytes of one file that are shown."""
TOTAL_LIMIT = 64 * 1024
"""Bytes of all files together that are shown (the later files are cut first)."""


@dataclass(frozen=True)
class Instructions:
    """The section text and, per file read, how much of it is in there."""

    text: str
    """"" when no file has anything to say."""
    files: list[ShownFile]


@dataclass(frozen=True)
class ShownFile:
    path: str
    size: int
    """The file's size in bytes."""
    shown: int
    """How many of them the section holds (`size` unless it was cut)."""


def instruction_files(cwd: Path | None, config: Path) -> list[Path]:
    """The files, in section order: `<config>/AGENTS.md`, then from the repository's root (the
    nearest directory at or above `cwd` holding `.git`; outside a repository only `cwd` itself)
    down to `cwd`, in each directory its AGENTS.md, else its CLAUDE.md."""
    found = [config / NAME] if _is_file(config / NAME) else []
    if cwd is None:
        return found
    chain = [cwd, *cwd.parents]
    root = next((i for i, directory in enumerate(chain) if _exists(directory / ".git")), 0)
    for directory in reversed(chain[: root + 1]):
        for name in (NAME, FALLBACK):
            if _is_file(directory / name):
                found.append(directory / name)
                break
    return found


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; a directory we may not look into holds none (no error: the
    instructions are read before every turn, which must not fail for them)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def read_instructions(paths: list[Path]) -> Instructions:
    """The section the files make: each file under its path, cut to `FILE_LIMIT` bytes and to
    what is left of `TOTAL_LIMIT`, a cut one ending with a note saying how much is not shown.
    Unreadable and blank files are left out (the former with a warning)."""
    budget = TOTAL_LIMIT
    parts: list[str] = []
    files: list[ShownFile] = []
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as exc:
            log.warning("cannot read the instructions file %s: %s", path, exc)
            continue
        if not data.strip():
            continue
        shown = _boundary(data, min(len(data), FILE_LIMIT, budget))
        budget -= shown
        text = data[:shown].decode("utf-8", errors="replace").rstrip()
        if shown < len(data):
            text = f"{text}\n{texts.cut_note(len(data) - shown, str(path))}".lstrip()
        parts.append(f"{texts.file_heading(str(path))}\n{text}")
        files.append(ShownFile(str(path), len(data), shown))
    if not parts:
        return Instructions("", [])
    return Instructions("\n\n".join([texts.HEADING, *parts]), files)


def _boundary(data: bytes, limit: int) -> int:
    """`limit`, moved back to the start of a UTF-8 character so no character is cut in two."""
    while 0 < limit < len(data) and data[limit] & 0xC0 == 0x80:
        limit -= 1
    return limit
