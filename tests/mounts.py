"""File systems a test mounts to make writes fail for real: root is not stopped by permission
bits (CI runs as root), a full or read-only file system stops everyone. Where the machine does
not allow the mount, the test is skipped with the reason (printed too)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def mount(*args: str) -> str | None:
    """Run `mount` with `args`; why it failed, or None."""
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    return None if done.returncode == 0 else f"mount {' '.join(args)}: {done.stderr.strip() or done.returncode}"


def skip(why: str) -> None:
    print(why)
    pytest.skip(why)


@contextmanager
def tmpfs(directory: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` on `directory` (made), unmounted afterwards."""
    directory.mkdir()
    why = mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(directory))
    if why is not None:
        skip(why)
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False)
