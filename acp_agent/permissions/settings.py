"""Claude Code's permission rules: `permissions.allow` / `deny` / `ask` of its settings files.

Read from `~/.claude/settings.json` (the user's), `<project>/.claude/settings.json` and
`<project>/.claude/settings.local.json` at each decision (they may be edited while a session
runs). A rule is `Tool` or `Tool(specifier)`:

- `Bash(npm test:*)` (or `Bash(npm test *)`): commands starting with those words, each part of a
  compound command checked as the saved rules check them (`rules.match`); `Bash(git status)`: that
  exact command; `Bash`: every command.
- `Read(<pattern>)`, `Edit(<pattern>)` (`Edit` covers every tool that changes files, `Write`
  only `write_file`): a gitignore-style path pattern (`*`, `**`, `?`; a pattern without a glob
  also covers what is under it): `//abs` absolute, `~/x` in the home directory, anything else
  relative to the project (the session's cwd).
- `WebFetch(domain:example.com)`: that host and its subdomains.
- `mcp__server__tool`: that MCP tool; `mcp__server`: every tool of the server.

Deny wins over ask, ask over allow. A project's allow rules count only once the project is
trusted (`acp_agent.trust`); its deny and ask rules always do.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from acp_agent.permissions.rules import CommandRule, match
from acp_agent.tools.confined import project_file_head, user_file_head
from acp_agent.tools.errors import OutsideWorkspace

log = logging.getLogger(__name__)

SettingsDecision = Literal["deny", "ask", "allow"]
DECISIONS: Final[tuple[SettingsDecision, ...]] = ("deny", "ask", "allow")
FILE_LIMIT: Final = 256 * 1024
TOOLS: Final[dict[str, frozenset[str]]] = {
    "Bash": frozenset({"bash"}),
    "Read": frozenset({"read_file", "grep", "glob"}),
    "Edit": frozenset({"edit_file", "write_file"}),
    "MultiEdit": frozenset({"edit_file"}),
    "Write": frozenset({"write_file"}),
    "Grep": frozenset({"grep"}),
    "Glob": frozenset({"glob"}),
    "WebFetch": frozenset({"web_fetch"}),
}
"""Claude Code's tool names in rules -> our tools they cover."""
_RULE = re.compile(r"([A-Za-z_][\w-]*)(?:\((.*)\))?", re.DOTALL)


@dataclass(frozen=True)
class SettingsRule:
    decision: SettingsDecision
    text: str
    """As written in the file: `Bash(npm test:*)`."""
    tool: str
    spec: str | None
    source: Path
    project: Path | None
    """The project whose file it is in (None: the user's own)."""


def settings_files(cwd: Path | None, home: Path) -> list[tuple[Path, Path | None]]:
    files: list[tuple[Path, Path | None]] = [(home / ".claude" / "settings.json", None)]
    if cwd is not None:
        files += [(cwd / ".claude" / name, cwd) for name in ("settings.json", "settings.local.json")]
    return files


def settings_rules(cwd: Path | None, home: Path) -> list[SettingsRule]:
    """Every rule of the files, in file order; a file that cannot be read is left out (a warning)."""
    found: list[SettingsRule] = []
    for path, project in settings_files(cwd, home):
        try:
            data, size = (
                project_file_head(project, path, FILE_LIMIT + 1) if project else user_file_head(path, FILE_LIMIT + 1)
            )
            if size > FILE_LIMIT:
                raise ValueError(f"larger than {FILE_LIMIT} bytes")
            document = json.loads(data)
        except FileNotFoundError:
            continue
        except (OSError, OutsideWorkspace, ValueError) as exc:
            log.warning("the permission rules of %s are not used: %s", path, exc)
            continue
        found += rules_of(document, path, project)
    return found


def rules_of(document: Any, path: Path, project: Path | None) -> list[SettingsRule]:
    table = document.get("permissions") if isinstance(document, dict) else None
    if not isinstance(table, dict):
        return []
    found = []
    for decision in DECISIONS:
        entries = table.get(decision, [])
        for text in entries if isinstance(entries, list) else []:
            parsed = _RULE.fullmatch(text.strip()) if isinstance(text, str) else None
            if parsed is None:
                log.warning("%s: the permission rule %r is not `Tool` or `Tool(specifier)`", path, text)
                continue
            found.append(SettingsRule(decision, text.strip(), parsed[1], parsed[2], path, project))
    return found


def first_match(
    rules: Sequence[SettingsRule], tool: str, arguments: dict[str, Any], command: str | None, cwd: Path, home: Path
) -> SettingsRule | None:
    """The rule that decides a call of our `tool` with `arguments`: a deny, else an ask, else an
    allow (the first of each in file order); None when none matches."""
    for decision in DECISIONS:
        for rule in rules:
            if rule.decision == decision and covers(rule, tool, arguments, command, cwd, home):
                return rule
    return None


def covers(
    rule: SettingsRule, tool: str, arguments: dict[str, Any], command: str | None, cwd: Path, home: Path
) -> bool:
    if rule.tool.startswith("mcp__"):
        return rule.spec is None and (tool == rule.tool or tool.startswith(rule.tool + "__"))
    if tool not in TOOLS.get(rule.tool, ()):
        return False
    if rule.spec is None or rule.spec in ("", "*"):
        return True
    if rule.tool == "Bash":
        return command is not None and _command_covered(rule, rule.spec, command)
    if rule.tool == "WebFetch":
        url = arguments.get("url")
        domain = rule.spec.removeprefix("domain:")
        host = urlsplit(url).hostname if isinstance(url, str) else None
        return rule.spec.startswith("domain:") and host is not None and (host == domain or host.endswith("." + domain))
    path = arguments.get("path")
    if not isinstance(path, str):
        return False
    target = (cwd / path).resolve() if not Path(path).is_absolute() else Path(path).resolve()
    return _pattern(rule.spec, str(cwd.resolve()), str(home)).fullmatch(str(target)) is not None


def _command_covered(rule: SettingsRule, spec: str, command: str) -> bool:
    """Whether `command` falls under a `Bash(...)` rule: its exact text, or with `:*` its words
    as a prefix: an allow needs every part of a compound command to start with them, a deny or
    an ask one part (`rules.match`)."""
    prefix = spec.removesuffix(":*").removesuffix(" *").strip()
    if prefix == spec.strip():
        return command.strip() == prefix
    return match([CommandRule("allow" if rule.decision == "allow" else "deny", prefix)], command) is not None


@lru_cache(maxsize=256)
def _pattern(spec: str, cwd: str, home: str) -> re.Pattern[str]:
    """A gitignore-style path pattern as a regular expression over absolute paths."""
    if spec.startswith("//"):
        base, rest = "", spec[1:]
    elif spec.startswith("~/"):
        base, rest = home, spec[1:]
    else:
        base, rest = cwd, "/" + spec.removeprefix("./").lstrip("/")
    out = ""
    index = 0
    while index < len(rest):
        if rest.startswith("**", index):
            out += ".*"
            index += 2
        elif rest[index] == "*":
            out += "[^/]*"
            index += 1
        elif rest[index] == "?":
            out += "[^/]"
            index += 1
        else:
            out += re.escape(rest[index])
            index += 1
    if not any(glob in rest for glob in "*?"):
        out += "(?:/.*)?"  # a plain path also covers what is under it
    return re.compile(re.escape(base) + out)
