"""What a confined command may do: the file policy, its writable roots, what it may not read, the
network. Plain data; the launcher reads it from its argv (`exec.parse`)."""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

Kind = Literal["read-only", "workspace-write", "danger-full-access"]
READ_ONLY: Final = "read-only"
WORKSPACE_WRITE: Final = "workspace-write"
FULL_ACCESS: Final = "danger-full-access"

Network = Literal["allow", "deny"]


class Policy(NamedTuple):
    """A confined command's rights (never `danger-full-access`: that one runs without a sandbox).

    Every path is absolute and resolved (no symbolic link in it), so a rule names the directory a
    command reaches, not a link to it."""

    kind: Kind
    writable: tuple[str, ...]
    """Directories the command may change, with everything below them (`read-only`: the
    session's private temporary directory alone)."""
    hidden: tuple[str, ...]
    """Directories the command may not read (the agent's configuration directory)."""
    network: Network = "allow"
    protected: tuple[str, ...] = ()
    """Directories inside `writable` that stay read-only (a repository's `.git`), where the backend
    can say so."""

    def launcher_options(self) -> list[str]:
        """The launcher's options for this policy (`exec.parse` reads them)."""
        options = ["--policy", self.kind, "--network", self.network]
        for option, paths in (("--write", self.writable), ("--hide", self.hidden), ("--protect", self.protected)):
            for path in paths:
                options += [option, path]
        return options
