"""User command files: `<cwd>/.acp-agent/commands/<name>.md` and `<config dir>/commands/<name>.md`.

A file is a prompt template: its text (after an optional front-matter block) is sent as the prompt,
`$ARGUMENTS` replaced by what was typed after the command. The front-matter's `description` (else
the first line of the text) describes it in the editor's menu; a file that uses `$ARGUMENTS` (or
names an `argument-hint`) takes input.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, NamedTuple

from acp_agent.commands.texts import FILE_INPUT_HINT
from acp_agent.kernel.yamltext import YamlError, load_yaml
from acp_agent.tools.confined import project_file_head, user_file_head
from acp_agent.tools.errors import OutsideWorkspace

log = logging.getLogger(__name__)

PROJECT_DIR = Path(".acp-agent") / "commands"
"""Where a project's command files live, under the session's cwd."""
USER_DIR = "commands"
"""Where the user's own command files live, under the config directory."""
ARGUMENTS = "$ARGUMENTS"
FILE_LIMIT = 256 * 1024
"""Bytes a command file may hold: a prompt template, never a dump (it is sent whole each time)."""
FRONT_MATTER_LIMIT = 16 * 1024
"""Bytes a front-matter block may hold: a description and a hint, never a document (what a YAML
parser is given from a repository is bounded, as its nesting is by `load_yaml`)."""
NAME = re.compile(r"[\w.-]+")
"""What a command file's name (without `.md`) may be: what the editor sends after `/` up to a space."""
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


class CommandFile(NamedTuple):
    """One command file, read."""

    name: str
    path: Path
    description: str
    template: str
    input_hint: str | None
    """None when the command takes no input."""

    def prompt(self, arguments: str) -> str:
        """The prompt the command sends: the template with `$ARGUMENTS` replaced; a template
        without it gets what was typed after a blank line (nothing typed is lost)."""
        if ARGUMENTS in self.template:
            return self.template.replace(ARGUMENTS, arguments)
        return f"{self.template}\n\n{arguments}" if arguments else self.template


def command_files(cwd: Path | None, config: Path) -> dict[str, CommandFile]:
    """The command files by name: the user's (config directory), then the project's (cwd), which
    win on a clash. Unreadable or empty files are left out with a warning."""
    found: dict[str, CommandFile] = {}
    # Each directory with the project its files must stay in: none for the user's own.
    sources: list[tuple[Path, Path | None]] = [(config / USER_DIR, None)]
    if cwd is not None:
        sources.append((cwd / PROJECT_DIR, cwd))
    for directory, project in sources:
        try:
            paths = sorted(directory.glob("*.md"))
        except OSError as exc:  # a directory we may not read offers no commands
            log.warning("cannot list the command files in %s: %s", directory, exc)
            continue
        for path in paths:
            command = read_command_file(path, project)
            if command is not None:
                found[command.name] = command
    return found


def read_command_file(path: Path, project: Path | None = None) -> CommandFile | None:
    """A command file, or None (with a warning) when it cannot serve as a command. A project's
    (`project` given) is read only if it stays inside the project (a symbolic link leading out of
    it is not followed); the user's own may link anywhere. Only a regular file of at most
    `FILE_LIMIT` bytes is read."""
    name = path.name.removesuffix(".md")
    if not NAME.fullmatch(name):
        log.warning("ignoring the command file %s: a command name has no spaces or slashes", path)
        return None
    try:
        data, size = (
            project_file_head(project, path, FILE_LIMIT + 1) if project else user_file_head(path, FILE_LIMIT + 1)
        )
        if size > FILE_LIMIT:
            log.warning("ignoring the command file %s: %d bytes, more than a command's %d", path, size, FILE_LIMIT)
            return None
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError, OutsideWorkspace) as exc:
        log.warning("ignoring the command file %s: %s", path, exc)
        return None
    try:
        meta, body = split_front_matter(text)
    except FrontMatterError as exc:
        log.warning("ignoring the command file %s: its front-matter %s", path, exc)
        return None
    template = body.strip()
    if not template:
        log.warning("ignoring the command file %s: it has no prompt text", path)
        return None
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        description = template.splitlines()[0].lstrip("#").strip()
    hint = meta.get("argument-hint")
    input_hint = hint if isinstance(hint, str) and hint.strip() else None
    if input_hint is None and ARGUMENTS in template:
        input_hint = FILE_INPUT_HINT
    return CommandFile(name, path, description.strip(), template, input_hint)


class FrontMatterError(Exception):
    """A front-matter block that cannot be read; the message says why, after "its front-matter"."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front-matter (a YAML mapping between `---` lines at the top) and the text after it;
    `FrontMatterError` when the block is too large or is not YAML."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}, text
    block = match[1]
    if len(block.encode("utf-8")) > FRONT_MATTER_LIMIT:
        raise FrontMatterError(f"holds more than {FRONT_MATTER_LIMIT} bytes")
    try:
        meta = load_yaml(block)
    except YamlError as exc:
        raise FrontMatterError(f"is not YAML ({exc})") from None
    return (meta if isinstance(meta, dict) else {}), text[match.end() :]
