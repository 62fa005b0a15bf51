"""bubblewrap (`bwrap`): a mount namespace in which `/` is read-only, the writable roots are bound
writable, a protected directory (`.git`) read-only again, a hidden directory covered by an empty
read-only tmpfs, and the network unshared when denied.

No `--new-session` and no PID namespace: the command stays in the process group and the process
table where the server's process registry ends what it leaves behind.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from acp_agent.sandbox.policy import Policy

PROBE_SECONDS = 10.0


@functools.cache
def probe() -> str | None:
    """The path of a `bwrap` that works here (found on PATH and able to run `true` with the mounts
    a policy uses), else None. Probed once per process."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    try:
        ran = subprocess.run(
            [found, "--ro-bind", "/", "/", "--dev", "/dev", "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=PROBE_SECONDS,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found if ran.returncode == 0 else None


def argv(bwrap: str, policy: Policy) -> list[str]:
    """The prefix that runs a command under `policy` with the `bwrap` at that path."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev"]
    for root in policy.writable:
        args += ["--bind", root, root]
    for path in policy.protected:
        if os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in policy.hidden:
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
    if policy.network == "deny":
        args.append("--unshare-net")
    return [*args, "--"]
