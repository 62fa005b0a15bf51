"""`ctx.get(SANDBOX)`: the deployment's sandbox settings, the backend found here, and the argv
prefix that confines one command of a session."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from acp_agent.kernel.context import ServiceKey
from acp_agent.sandbox import texts
from acp_agent.sandbox.backends import Backend, Setting, choose
from acp_agent.sandbox.paths import resolved
from acp_agent.sandbox.policy import FULL_ACCESS, READ_ONLY, Kind, Network, Policy

log = logging.getLogger(__name__)


class Sandbox:
    """One composition's sandbox: which backend, which extra roots, which directories are hidden."""

    def __init__(
        self,
        setting: Setting = "auto",
        *,
        network: Network = "allow",
        extra_writable: Sequence[str] = (),
        allow_full_access: bool = True,
        hidden: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        self.setting: Setting = setting
        self.network: Network = network
        self.extra_writable = tuple(extra_writable)
        self.allow_full_access = allow_full_access
        self.hidden = resolved(hidden)

    @functools.cached_property
    def backend(self) -> Backend:
        """The backend in use, probed at the first command (once per process)."""
        backend = choose(self.setting)
        log.info("sandbox: %s", texts.backend_line(backend))
        return backend

    def policy(self, kind: Kind, cwd: Path, scratch: Path) -> Policy:
        """What a command of a session in `cwd` with the private temporary directory `scratch`
        may do under `kind` (not `danger-full-access`)."""
        assert kind != FULL_ACCESS  # that one has no policy: it runs unconfined
        if kind == READ_ONLY:
            return Policy(kind, resolved([scratch]), self.hidden, self.network)
        writable = resolved([cwd, scratch, *self.extra_writable])
        return Policy(kind, writable, self.hidden, self.network, (os.path.join(writable[0], ".git"),))

    def prefix(self, kind: Kind, cwd: Path, scratch: Path) -> list[str]:
        """The argv to put before a command so it runs under `kind` (empty for
        `danger-full-access`). Raises `SandboxUnavailable` when no backend works here."""
        if kind == FULL_ACCESS:
            return []
        return self.backend.prefix(self.policy(kind, cwd, scratch))


SANDBOX: Final = ServiceKey[Sandbox]("sandbox")
"""`ctx.get(SANDBOX)`: the sandbox of commands (a composition without it refuses confined ones)."""
