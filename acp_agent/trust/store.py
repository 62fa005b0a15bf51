"""The projects the user trusts for good: `<config dir>/trusted-projects.json`, mode 0600.

`{"projects": {"<absolute project path>": {"trustedAt": <epoch ms>}}}`. A file that cannot be read
or parsed trusts nothing (and is replaced at the next save). Writes go to a temporary file in the
same directory, renamed over the old one, so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from acp_agent.config_dir import config_dir

log = logging.getLogger(__name__)

FILE_NAME: Final = "trusted-projects.json"


class TrustStore:
    """The saved answers, read afresh at each question (another server may have saved one)."""

    def __init__(self, config: Callable[[], Path] = config_dir) -> None:
        self._config = config

    @property
    def path(self) -> Path:
        return self._config() / FILE_NAME

    def trusted(self, project: Path) -> bool:
        return str(project) in self._projects()

    def save(self, project: Path) -> None:
        projects = self._projects()
        projects[str(project)] = {"trustedAt": int(time.time() * 1000)}
        self._write(projects)

    def revoke(self, project: Path) -> bool:
        """Forget `project`'s trust; whether it was saved."""
        projects = self._projects()
        if projects.pop(str(project), None) is None:
            return False
        self._write(projects)
        return True

    def _projects(self) -> dict[str, Any]:
        try:
            document = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s cannot be read, so no project is trusted for good: %s", self.path, exc)
            return {}
        projects = document.get("projects") if isinstance(document, dict) else None
        return dict(projects) if isinstance(projects, dict) else {}

    def _write(self, projects: dict[str, Any]) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = directory / f".{FILE_NAME}.{os.getpid()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump({"projects": projects}, file, indent=2)
        os.replace(temporary, self.path)
