"""Rules that remember a project: "always allow (or reject) commands starting with `npm test`",
"always allow fetching from `docs.python.org`".

A command rule is a command prefix (whole words); a scope rule allows the calls of one tool with
one grant scope (`Tool.grant_scope`: web_fetch's host). Both are saved for a project (the
repository's root, else the cwd), so every thread opened in the project inherits them. They live in
one JSON file in the user's configuration directory, `permissions.json` (mode 0600, editable by
hand); `scopes` is absent from a file written before scope rules existed, which reads as none:

    {"version": 1, "projects": {"/home/me/app": {"allow": ["npm test"], "deny": ["git push"],
                                                 "scopes": {"web_fetch": ["docs.python.org"]}}}}

A command matches when each of its parts (split at `;`, `&`, `&&`, `||`, `|` and newlines) starts
with a rule's words; a command with a substitution (`$(`, a backquote) matches nothing. A deny rule
wins: one part matching one refuses the command. An allow rule lets a command run unasked, inside
the sandbox; it never lifts the sandbox (an escalation always asks).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple

Decision = Literal["allow", "deny"]
FILE_NAME: Final = "permissions.json"
INTERPRETERS: Final = frozenset(
    "sh bash zsh dash fish ksh csh python python2 python3 node deno bun ruby perl php lua env sudo doas"
    " xargs exec eval nohup time nice timeout setsid command builtin".split()
)
"""Words a prefix may not be alone: allowing one would allow anything it runs."""
_SEPARATORS = re.compile(r"\|\||&&|[;&|\n]")


class CommandRule(NamedTuple):
    decision: Decision
    prefix: str


class ScopeRule(NamedTuple):
    """Allow the calls of `tool` whose grant scope is `scope` (web_fetch: a host) unasked."""

    tool: str
    scope: str


SavedRule = CommandRule | ScopeRule


def command_prefix(command: str) -> str | None:
    """The prefix an "always" answer for `command` would save: its first words up to the first
    argument that looks like a path (a `/` or a `.` in it), an option, a variable or a redirection;
    None for a compound command, a substitution, or a prefix that would be a bare interpreter."""
    if _SEPARATORS.search(command) or "$(" in command or "`" in command:
        return None
    words = _words(command)
    if not words:
        return None
    kept: list[str] = []
    for word in words:
        if word.startswith(("-", "~", "$", ">", "<")) or "/" in word or "." in word or "=" in word:
            break
        kept.append(word)
    if not kept or (len(kept) == 1 and kept[0] in INTERPRETERS):
        return None
    return " ".join(kept)


def match(rules: Sequence[CommandRule], command: str) -> CommandRule | None:
    """The deny rule a part of `command` starts with (a deny wins); else, when every part starts
    with an allow rule, the first part's; else None."""
    if "$(" in command or "`" in command:
        return None
    parts = [words for words in map(_words, _SEPARATORS.split(command)) if words]

    def rule_of(words: list[str], decision: Decision) -> CommandRule | None:
        return next(
            (r for r in rules if r.decision == decision and words[: len(r.prefix.split())] == r.prefix.split()), None
        )

    for words in parts:
        denying = rule_of(words, "deny")
        if denying is not None:
            return denying
    allowing = [rule_of(words, "allow") for words in parts]
    return allowing[0] if allowing and all(allowing) else None


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part)
    except ValueError:  # an unbalanced quote: no words to match
        return []


class RuleFile:
    """`permissions.json` in a configuration directory: read at each use (it may be edited by
    hand), written whole through a private temporary file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def rules(self, project: Path) -> list[CommandRule]:
        """The project's command rules: its deny rules, then its allow rules, each in the file's order."""
        entry = self._entry(self._read(), project)
        found = []
        for decision in ("deny", "allow"):
            found += [CommandRule(decision, p) for p in _texts(entry.get(decision))]
        return found

    def scope_rules(self, project: Path) -> list[ScopeRule]:
        """The project's scope rules, per tool in the file's order."""
        scopes = self._entry(self._read(), project).get("scopes")
        if not isinstance(scopes, dict):
            return []
        return [ScopeRule(tool, scope) for tool, listed in scopes.items() for scope in _texts(listed)]

    def saved(self, project: Path) -> list[SavedRule]:
        """Every rule of the project, as `/permissions` numbers them: commands, then scopes."""
        return [*self.rules(project), *self.scope_rules(project)]

    def add(self, project: Path, rule: SavedRule) -> None:
        data = self._read()
        entry = data["projects"][str(project)] = self._entry(data, project)  # a damaged one is replaced
        holder, key, value = _place(entry, rule)
        listed = holder.get(key)
        if not isinstance(listed, list):
            listed = holder[key] = []
        if value not in listed:
            listed.append(value)
        self._write(data)

    def remove(self, project: Path, rule: SavedRule) -> None:
        data = self._read()
        holder, key, value = _place(self._entry(data, project), rule)
        listed = holder.get(key)
        if isinstance(listed, list) and value in listed:
            listed.remove(value)
        self._write(data)

    @staticmethod
    def _entry(data: dict[str, Any], project: Path) -> dict[str, Any]:
        entry = data["projects"].get(str(project), {})
        return entry if isinstance(entry, dict) else {}

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"version": 1, "projects": {}}
        return (
            data
            if isinstance(data, dict) and isinstance(data.get("projects"), dict)
            else {"version": 1, "projects": {}}
        )

    def _write(self, data: object) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=2)
            file.write("\n")
        os.replace(temporary, self.path)


def _texts(listed: object) -> list[str]:
    """The non-blank strings of a list of the file (anything else in it is ignored)."""
    return [item for item in listed if isinstance(item, str) and item.strip()] if isinstance(listed, list) else []


def _place(entry: dict[str, Any], rule: SavedRule) -> tuple[dict[str, Any], str, str]:
    """Where `rule` is kept in a project's entry: the dict, its key (a list of values), the value."""
    if isinstance(rule, CommandRule):
        return entry, rule.decision, rule.prefix
    scopes = entry.get("scopes")
    if not isinstance(scopes, dict):
        scopes = entry["scopes"] = {}
    return scopes, rule.tool, rule.scope
