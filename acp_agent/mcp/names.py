"""Agent tool names for MCP tools: `mcp__<server>__<tool>`, safe for every model API.

Model APIs accept tool names of `[A-Za-z0-9_-]`, at most 64 characters. Each part keeps its safe
characters and has the others replaced by `_`; a longer name keeps the tool part's beginning and
ends with 8 hex digits of a hash of the original names, so two long names that share a beginning
stay apart. Names that still collide get `_2`, `_3`, ... in the order the tools are listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_LENGTH = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_DIGITS = 8


def safe(part: str) -> str:
    return _UNSAFE.sub("_", part)


def tool_name(server: str, tool: str) -> str:
    """The agent tool name of `tool` of `server`, before collisions are resolved."""
    head = f"{PREFIX}{safe(server)}{SEPARATOR}"
    name = head + safe(tool)
    if len(name) <= MAX_LENGTH:
        return name
    import hashlib  # here: only a name this long needs it: its import is no cost of every start-up

    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_DIGITS]
    room = MAX_LENGTH - len(digest) - 1
    if len(head) >= room:  # a server name so long that the tool part has no room: cut it too
        head = head[: room - 1]
    return f"{head}{safe(tool)[: room - len(head)]}_{digest}"


def assign(tools: Iterable[tuple[str, str]]) -> list[str]:
    """The agent tool names of `(server, tool)` pairs, in order: a name taken already gets the
    first free `_<n>` from 2 (cut so that it stays within the length limit)."""
    taken: set[str] = set()
    names = []
    for server, tool in tools:
        name = base = tool_name(server, tool)
        n = 1
        while name in taken:
            n += 1
            suffix = f"_{n}"
            name = base[: MAX_LENGTH - len(suffix)] + suffix
        taken.add(name)
        names.append(name)
    return names
