"""A 1 GB sparse text file, made in a moment: what the bounded-read tests read."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SHM = Path("/dev/shm")

GB = 1 << 30
LAST_LINE = 1002
"""The number of the line at the very end (the hole is line 1001)."""


def sparse_file(path: Path) -> Path:
    """1 GB: 1000 text lines, a hole (NUL bytes, no newline), and `the last line` at the end."""
    with path.open("wb") as file:
        file.write(b"".join(b"line %d of the start\n" % n for n in range(1, 1001)))
        file.seek(GB)
        file.write(b"\nthe last line\n")
    return path


@contextmanager
def memory_directory(fallback: Path) -> Iterator[Path]:
    """A directory in a tmpfs when there is one (its holes read as zeros without filling the page
    cache: a 1 GB read there takes a second, not four), else `fallback`."""
    if not SHM.is_dir():
        yield fallback
        return
    with tempfile.TemporaryDirectory(dir=SHM, prefix="acp-agent-test-") as directory:
        yield Path(directory)
