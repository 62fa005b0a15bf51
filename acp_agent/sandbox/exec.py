"""The launcher: `python -I -S <this file> --policy ... -- bash -c CMD` confines itself with
Landlock, then `exec`s the command, which with everything it starts stays confined.

It runs as a script of its own (not `-m`: with `-S` the installed package is not on the path),
imports only the standard library's `os`, `stat` and `_ctypes` (not `ctypes`, whose import alone
costs several ms) and its siblings, and runs nothing when the confinement fails: it says why on
stderr and exits 126 (the shell's "cannot execute").
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # as a script: its package's root goes first on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from acp_agent.sandbox import landlock  # noqa: E402 - after the path is set

CANNOT_RUN = 126
USAGE = (
    "usage: exec.py --policy read-only|workspace-write [--network allow|deny] [--write DIR]... [--hide DIR]... "
    "-- COMMAND..."
)
POLICIES = ("read-only", "workspace-write")


def main(argv: list[str]) -> int:
    """Confine, then exec the command after `--`; returns only on failure (its exit status)."""
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        return _refuse(USAGE)
    split = argv.index("--")
    try:
        writable, hidden, deny_network = parse(argv[:split])
        landlock.restrict(writable, hidden, deny_network=deny_network)
    except (ValueError, OSError) as exc:
        return _refuse(f"the command was not run: {exc}")
    command = argv[split + 1 :]
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        return _refuse(f"{command[0]}: {exc.strerror}")


def parse(options: list[str]) -> tuple[list[str], list[str], bool]:
    """The writable roots, the hidden directories and whether the network is denied, from the
    options `Policy.launcher_options` writes; ValueError names the first wrong one. `--protect`
    (read-only directories inside a writable root) cannot be said with Landlock and is ignored."""
    if len(options) % 2:
        raise ValueError(f"option {options[-1]!r} has no value")
    policy, network = None, "allow"
    paths: dict[str, list[str]] = {"--write": [], "--hide": [], "--protect": []}
    for option, value in zip(options[::2], options[1::2], strict=False):
        if option == "--policy":
            policy = value
        elif option == "--network":
            network = value
        elif option in paths:
            if not os.path.isabs(value):
                raise ValueError(f"{option} {value!r} is not an absolute path")
            paths[option].append(value)
        else:
            raise ValueError(f"unknown option {option!r}")
    if policy not in POLICIES:
        raise ValueError(f"--policy must be read-only or workspace-write, not {policy!r}")
    if network not in ("allow", "deny"):
        raise ValueError(f"--network must be allow or deny, not {network!r}")
    return paths["--write"], paths["--hide"], network == "deny"


def _refuse(message: str) -> int:
    print(f"sandbox: {message}", file=sys.stderr)
    return CANNOT_RUN


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
