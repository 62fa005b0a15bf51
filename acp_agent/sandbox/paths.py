"""Path helpers shared by the policy and the launcher (standard library only: the launcher starts
on them)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own import costs the launcher's start-up a few ms
if TYPE_CHECKING:
    from collections.abc import Iterable


def resolved(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """`paths` absolute, with their symbolic links resolved, each once, in order."""
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(os.path.realpath(path), None)
    return tuple(seen)


def within(path: str, root: str) -> bool:
    """`path` is `root` or lies below it (both absolute and resolved)."""
    return path == root or path.startswith(root.rstrip("/") + "/")
