"""Which backend confines commands here, and the argv prefix that confines one command.

`auto` picks bubblewrap when a working `bwrap` is found (it can also hide the configuration
directory entirely and keep `.git` read-only), else Landlock when the kernel offers it, else none:
then every confined command is refused (fail closed), never run unconfined.
"""

from __future__ import annotations

import os
import sys
from typing import Final, Literal, NamedTuple

from acp_agent.sandbox import bubblewrap
from acp_agent.sandbox.errors import SandboxUnavailable
from acp_agent.sandbox.policy import Policy

Setting = Literal["auto", "landlock", "bubblewrap", "none"]
Name = Literal["landlock", "bubblewrap", "none"]
Enforcement = Literal["full", "partial", "none"]

LAUNCHER: Final = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exec.py")


class Backend(NamedTuple):
    """The backend in use: its name, Landlock's ABI, how fully it enforces a policy and why."""

    name: Name
    enforcement: Enforcement
    notes: tuple[str, ...] = ()
    """What it cannot enforce (`partial`), or why there is no sandbox (`none`)."""
    abi: int = 0
    """Landlock's ABI (0: not Landlock)."""
    bwrap: str = ""
    """bubblewrap's path (empty: not bubblewrap)."""

    def prefix(self, policy: Policy) -> list[str]:
        """The argv that runs a command (appended to it) confined to `policy`. Raises
        `SandboxUnavailable` when there is no backend (nothing may then run)."""
        if self.name == "bubblewrap":
            return bubblewrap.argv(self.bwrap, policy)
        if self.name == "landlock":
            # -I: no user site, no PYTHON* variables, no cwd on the path; -S: no site at all.
            return [sys.executable, "-I", "-S", LAUNCHER, *policy.launcher_options(), "--"]
        raise SandboxUnavailable(self.notes[0] if self.notes else "no sandbox backend")


def choose(setting: Setting) -> Backend:
    """The strongest backend `setting` allows that works here (probes run once per process)."""
    if setting == "none":
        return Backend("none", "none", ("the deployment turned the sandbox off (backend: none)",))
    if setting in ("auto", "bubblewrap"):
        found = bubblewrap.probe()
        if found is not None:
            return Backend("bubblewrap", "full", bwrap=found)
    if setting in ("auto", "landlock"):
        # Here, not at the top: ctypes costs the server's start-up; the first command pays it.
        from acp_agent.sandbox import landlock

        version = landlock.abi()
        if version >= 1:
            missing = tuple(landlock.partial(version))
            return Backend("landlock", "partial" if missing else "full", missing, abi=version)
    return Backend("none", "none", (_why_none(setting),))


def _why_none(setting: Setting) -> str:
    if sys.platform != "linux":  # pragma: no cover - the suite runs on Linux
        return f"commands cannot be sandboxed on {sys.platform}"
    if setting == "bubblewrap":
        return "bubblewrap (bwrap) is not installed or does not work here"
    if setting == "landlock":
        return "the kernel offers no Landlock (Linux 5.13 or later with Landlock enabled is needed)"
    return "the kernel offers no Landlock and bubblewrap (bwrap) is not installed or does not work here"
