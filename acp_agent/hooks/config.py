"""Where hooks are configured and what a file configures: discovery and parsing, no running.

Claude Code's dialect is the `hooks` key of a settings file: `{"hooks": {"<Event>": [{"matcher":
"...", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}`; Codex's `hooks.json`
has the same shape. A file that is not JSON, or whose shape or a regular expression is invalid, is
left out whole with a warning naming it; a handler of another `type` is skipped with one warning
per file; an event we do not run is ignored.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, get_args

from acp_agent.hooks.matchers import Dialect, Matcher
from acp_agent.tools.confined import project_file_head, user_file_head
from acp_agent.tools.errors import OutsideWorkspace

log = logging.getLogger(__name__)

HookEvent = Literal[
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStart", "SubagentStop"
]
EVENTS: Final[frozenset[str]] = frozenset(get_args(HookEvent))
DEFAULT_TIMEOUT: Final = 60.0
"""Seconds a hook may run when its handler names no `timeout`."""
FILE_LIMIT: Final = 256 * 1024
"""The largest configuration file read (a larger one is left out with a warning)."""


@dataclass(frozen=True)
class HookSource:
    """A file hooks may come from: its dialect, and whether the project (not the user) holds it."""

    path: Path
    dialect: Dialect
    project: Path | None = None
    """The project directory holding the file (its links may not lead out of it); None: the user's."""


@dataclass(frozen=True)
class HookHandler:
    """One command to run for `event` when `matcher` selects the subject."""

    event: HookEvent
    matcher: Matcher
    command: str
    timeout: float
    source: HookSource


@dataclass(frozen=True)
class HookSet:
    """What a session runs: every handler of every file read, in file order, and the warnings."""

    handlers: tuple[HookHandler, ...] = ()
    sources: tuple[HookSource, ...] = ()
    """The files that configured at least one handler."""
    warnings: tuple[str, ...] = field(default=())

    def users_only(self) -> HookSet:
        """Without the project's hooks (an untrusted project)."""
        return HookSet(
            tuple(h for h in self.handlers if h.source.project is None),
            tuple(s for s in self.sources if s.project is None),
            self.warnings,
        )

    def select(self, event: HookEvent, names: tuple[str, ...] | None = None) -> list[HookHandler]:
        """The handlers of `event` whose matcher selects one of `names` (None: matchers ignored)."""
        return [
            handler
            for handler in self.handlers
            if handler.event == event and (names is None or handler.matcher.matches(names))
        ]


def hook_sources(cwd: Path | None, home: Path, config: Path) -> list[HookSource]:
    """The files read, in the order their hooks run: the agent's, the user's, then the project's."""
    sources = [
        HookSource(config / "hooks.json", "claude"),
        HookSource(home / ".claude" / "settings.json", "claude"),
        HookSource(home / ".codex" / "hooks.json", "codex"),
    ]
    if cwd is not None:
        sources += [
            HookSource(cwd / ".claude" / "settings.json", "claude", cwd),
            HookSource(cwd / ".claude" / "settings.local.json", "claude", cwd),
            HookSource(cwd / ".codex" / "hooks.json", "codex", cwd),
        ]
    return sources


def load_hooks(sources: list[HookSource]) -> HookSet:
    """Read and parse `sources` (absent files are skipped quietly)."""
    handlers: list[HookHandler] = []
    used: list[HookSource] = []
    warnings: list[str] = []
    for source in sources:
        found, warning = read_source(source)
        if warning is not None:
            log.warning("%s", warning)
            warnings.append(warning)
        if found:
            handlers += found
            used.append(source)
    return HookSet(tuple(handlers), tuple(used), tuple(warnings))


class InvalidHooks(ValueError):
    """A configuration file's hooks have the wrong shape."""


def read_source(source: HookSource) -> tuple[list[HookHandler], str | None]:
    """The handlers `source` configures, and a warning when some or all of it was left out."""
    try:
        if source.project is not None:
            data, size = project_file_head(source.project, source.path, FILE_LIMIT + 1)
        else:
            data, size = user_file_head(source.path, FILE_LIMIT + 1)
    except FileNotFoundError:
        return [], None
    except (OSError, OutsideWorkspace) as exc:  # a link out of the project, a FIFO, an unreadable file
        return [], f"hooks of {source.path} not read: {exc}"
    if size > FILE_LIMIT:
        return [], f"hooks of {source.path} not read: the file is larger than {FILE_LIMIT} bytes"
    try:
        document = json.loads(data)
        return parse_hooks(document, source)
    except ValueError as exc:  # JSON, shape and regular expressions (re.error is a ValueError)
        return [], f"hooks of {source.path} not read: {exc}"


def parse_hooks(document: Any, source: HookSource) -> tuple[list[HookHandler], str | None]:
    """The handlers of a parsed file; raises `InvalidHooks` or `re.error` when it is invalid."""
    if not isinstance(document, dict):
        raise InvalidHooks("the file is not a JSON object")
    table = document.get("hooks", {})
    if not isinstance(table, dict):
        raise InvalidHooks("`hooks` is not an object")
    handlers: list[HookHandler] = []
    skipped: set[str] = set()
    for event, groups in table.items():
        if not isinstance(groups, list):
            raise InvalidHooks(f"`hooks.{event}` is not a list")
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
                raise InvalidHooks(f"a group of `hooks.{event}` is not an object with a `hooks` list")
            matcher = _matcher(group.get("matcher"), source, event)
            for entry in group.get("hooks", []):
                kind = entry.get("type") if isinstance(entry, dict) else None
                if kind != "command":
                    skipped.add(str(kind))
                    continue
                command, timeout = entry.get("command"), entry.get("timeout", DEFAULT_TIMEOUT)
                if not isinstance(command, str) or not command.strip():
                    raise InvalidHooks(f"a handler of `hooks.{event}` has no `command`")
                if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
                    raise InvalidHooks(f"a handler of `hooks.{event}` has an invalid `timeout`")
                if event in EVENTS:
                    handlers.append(HookHandler(event, matcher, command, float(timeout), source))
    warning = None
    if skipped:
        warning = f"hooks of {source.path}: handlers of type {', '.join(sorted(skipped))} skipped (only `command` runs)"
    return handlers, warning


def _matcher(value: Any, source: HookSource, event: str) -> Matcher:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidHooks(f"a matcher of `hooks.{event}` is not a string")
    try:
        return Matcher.parse(value, source.dialect)
    except re.error as exc:
        raise InvalidHooks(
            f"the matcher {value!r} of `hooks.{event}` is not a valid regular expression ({exc})"
        ) from None
