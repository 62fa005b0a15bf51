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

    def policy(self, kind: Kind, cwd: Path, scratch: Path, additional: Sequence[Path] = ()) -> Policy:
        """What a command of a session in `cwd` (with the `additional` roots its client named) and
        the private temporary directory `scratch` may do under `kind` (not `danger-full-access`).
        Each workspace root's `.git` stays read-only where the backend can say so."""
        assert kind != FULL_ACCESS  # that one has no policy: it runs unconfined
        writable = self.writable(kind, cwd, scratch, additional)
        if kind == READ_ONLY:
            return Policy(kind, writable, self.hidden, self.network)
        protected = tuple(os.path.join(root, ".git") for root in resolved([cwd, *additional]))
        return Policy(kind, writable, self.hidden, self.network, protected)

    def writable(self, kind: Kind, cwd: Path, scratch: Path, additional: Sequence[Path] = ()) -> tuple[str, ...]:
        """The directories a session in `cwd` may change under `kind` (not `danger-full-access`),
        resolved: `read-only`, its private temporary directory `scratch` alone; `workspace-write`,
        the cwd first, the session's `additional` roots, `scratch`, then the deployment's
        `extraWritable`. The one statement of the set: the commands' policy and the file tools
        (`tools.sandboxing.writable_roots`) read it."""
        if kind == READ_ONLY:
            return resolved([scratch])
        return resolved([cwd, *additional, scratch, *self.extra_writable])

    def prefix(self, kind: Kind, cwd: Path, scratch: Path, additional: Sequence[Path] = ()) -> list[str]:
        """The argv to put before a command so it runs under `kind` (empty for
        `danger-full-access`). Raises `SandboxUnavailable` when no backend works here."""
        if kind == FULL_ACCESS:
            return []
        return self.backend.prefix(self.policy(kind, cwd, scratch, additional))


SANDBOX: Final = ServiceKey[Sandbox]("sandbox")
"""`ctx.get(SANDBOX)`: the sandbox of commands (a composition without it refuses confined ones)."""
