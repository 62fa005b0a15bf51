"""Which instruction files apply to a working directory, and the section they make."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from acp_agent.instructions import texts
from acp_agent.tools.confined import project_file_head, user_file_head
from acp_agent.tools.errors import OutsideWorkspace

log = logging.getLogger(__name__)

NAME = "AGENTS.md"
FALLBACK = "CLAUDE.md"
"""Read in a project directory that has no AGENTS.md (users moving over from Claude Code)."""
LOCAL = ("AGENTS.local.md", "CLAUDE.local.md")
"""Personal overlays (not committed) read after a directory's AGENTS.md or CLAUDE.md."""
FILE_LIMIT = 32 * 1024
"""Bytes of one file that are shown."""
TOTAL_LIMIT = 64 * 1024
"""Bytes of all files together that are shown (the later files are cut first)."""
_UTF8_TAIL = 3
"""Bytes read past a limit, so a cut there can step back to a character's start."""


class Instructions(NamedTuple):
    """The section text and, per file read, how much of it is in there."""

    text: str
    """"" when no file has anything to say."""
    files: list[ShownFile]


class ShownFile(NamedTuple):
    path: str
    size: int
    """The file's size in bytes."""
    shown: int
    """How many of them the section holds (`size` unless it was cut)."""


def project_root(cwd: Path) -> Path:
    """The project `cwd` is in: the repository's root (the nearest directory at or above `cwd`
    holding `.git`), else `cwd` itself. Its instruction files are read only inside it."""
    return next((directory for directory in [cwd, *cwd.parents] if _exists(directory / ".git")), cwd)


def instruction_files(cwd: Path | None, config: Path, additional: Sequence[Path] = ()) -> list[Path]:
    """The files, in section order: `<config>/AGENTS.md`, then from the project's root
    (`project_root`) down to `cwd`, in each directory its AGENTS.md, else its CLAUDE.md, each
    followed by the directory's AGENTS.local.md and CLAUDE.local.md; then the same for each of
    the session's `additional` roots (a file already listed is not listed again)."""
    found = [config / NAME] if _is_file(config / NAME) else []
    for root in [] if cwd is None else [cwd, *additional]:
        chain = [root, *root.parents]
        top = chain.index(project_root(root))
        for directory in reversed(chain[: top + 1]):
            found += [path for path in directory_files(directory) if path not in found]
    return found


def directory_files(directory: Path) -> list[Path]:
    """A directory's instruction files: its AGENTS.md (else its CLAUDE.md), then its local
    overlays (`LOCAL`) when it has one of those."""
    main = next((directory / name for name in (NAME, FALLBACK) if _is_file(directory / name)), None)
    if main is None:
        return []
    return [main, *(directory / name for name in LOCAL if _is_file(directory / name))]


def nested_files(cwd: Path, target: Path) -> list[tuple[Path, list[Path]]]:
    """The directories strictly between `cwd` and the file `target` (below `cwd`), nearest `cwd`
    first, that have instruction files, with those files."""
    try:
        below = target.parent.relative_to(cwd)
    except ValueError:
        return []
    found = []
    directory = cwd
    for part in below.parts:
        directory = directory / part
        files = directory_files(directory)
        if files:
            found.append((directory, files))
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


def read_instructions(paths: list[Path], *projects: Path) -> Instructions:
    """The section the files make: each file under its path, cut to `FILE_LIMIT` bytes and to
    what is left of `TOTAL_LIMIT`, a cut one ending with a note saying how much is not shown.
    A file inside one of the `projects` (the cwd's, an additional root's) is read only if it
    stays there (a symbolic link leading out of the project is not followed); the user's own file
    may link anywhere. Only what is shown is read, and only from a regular file. Unreadable and
    blank files are left out (the former with a warning)."""
    budget = TOTAL_LIMIT
    parts: list[str] = []
    files: list[ShownFile] = []
    for path in paths:
        limit = min(FILE_LIMIT, budget)
        try:
            project = next((project for project in projects if path.is_relative_to(project)), None)
            if project is not None:
                data, size = project_file_head(project, path, limit + _UTF8_TAIL)
            else:
                data, size = user_file_head(path, limit + _UTF8_TAIL)
        except (OSError, OutsideWorkspace) as exc:
            log.warning("cannot read the instructions file %s: %s", path, exc)
            continue
        if not data.strip() and size <= len(data):
            continue
        shown = _boundary(data, min(len(data), limit))
        budget -= shown
        text = data[:shown].decode("utf-8", errors="replace").rstrip()
        if shown < size:
            text = f"{text}\n{texts.cut_note(size - shown, str(path))}".lstrip()
        parts.append(f"{texts.file_heading(str(path))}\n{text}")
        files.append(ShownFile(str(path), size, shown))
    if not parts:
        return Instructions("", [])
    return Instructions("\n\n".join([texts.HEADING, *parts]), files)


def _boundary(data: bytes, limit: int) -> int:
    """`limit`, moved back to the start of a UTF-8 character so no character is cut in two."""
    while 0 < limit < len(data) and data[limit] & 0xC0 == 0x80:
        limit -= 1
    return limit
