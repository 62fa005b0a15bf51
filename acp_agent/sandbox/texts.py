"""Every text of the sandbox package that a model or a user reads."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from acp_agent.sandbox.backends import Backend
from acp_agent.sandbox.paths import within
from acp_agent.sandbox.policy import Policy

INSTALL_HINT = (
    "choose the Full access mode to run commands without a sandbox, or install bubblewrap"
    " (`apt-get install bubblewrap`, `dnf install bubblewrap`) and restart the agent"
)


def unavailable(why: str) -> str:
    """What a confined command that cannot run answers (fail closed)."""
    return f"commands must run in a sandbox in this mode, and none is available here: {why}; {INSTALL_HINT}"


def backend_line(backend: Backend) -> str:
    """The backend in one line, for the log and `/sandbox`."""
    if backend.name == "none":
        return f"none ({'; '.join(backend.notes)})"
    detail = f"ABI {backend.abi}, " if backend.abi else ""
    line = f"{backend.name} ({detail}enforcement: {backend.enforcement})"
    return line + "".join(f"; {note}" for note in backend.notes)


def report(backend: Backend, kind: str, writable: Sequence[str], hidden: Sequence[str], network: str) -> str:
    """`/sandbox`: the backend, its enforcement, the session's policy and writable roots."""
    lines = [f"Sandbox backend: {backend_line(backend)}", f"Policy: {kind}"]
    if kind == "danger-full-access":
        lines.append("Commands run without a sandbox (Full access).")
    else:
        lines.append("Writable: " + (", ".join(writable) or "nothing"))
        lines.append("Hidden from commands: " + (", ".join(hidden) or "nothing"))
        lines.append(
            f"Network: {network}"
            + (" (cannot be enforced)" if network == "deny" and backend.name == "landlock" and backend.abi < 4 else "")
        )
        if backend.name == "landlock":
            lines.append(
                "`.git` inside a writable root stays writable: Landlock cannot make it read-only (bubblewrap can)."
            )
        elif backend.name == "bubblewrap":
            lines.append("`.git` inside a writable root stays read-only.")
        else:
            lines.append(unavailable("; ".join(backend.notes)))
    return "\n".join(lines)


_REFUSALS = ("Permission denied", "Read-only file system", "Invalid cross-device link", "Operation not permitted")
_QUOTED = re.compile(r"'([^'\n]+)'")
_SHELL_FORM = re.compile(r"^[^:\s]+: (?:line \d+: )?([^:'\n]+): ")
"""`bash: <path>: Permission denied` (`bash: line 1: <path>: ...` from `bash -c`); the other tools
quote their paths (`touch: cannot touch '<path>'`, Python's `[Errno 13] Permission denied:
'<path>'`, `ln ... 'link' => 'target'`)."""


def denied_write(output: str, policy: Policy, cwd: str) -> str | None:
    """The line the model reads after a confined command's output when the sandbox seems to have
    refused a write: naming the first path the refusals name outside the writable roots (relative
    ones are read from `cwd`), else saying it cannot."""
    refusals = [line for line in output.splitlines() if any(phrase in line for phrase in _REFUSALS)]
    if not refusals:
        return None
    for line in refusals:
        shell = _SHELL_FORM.match(line)
        for path in [*([shell[1]] if shell else []), *_QUOTED.findall(line)]:
            path = os.path.normpath(os.path.join(cwd, path))
            if not any(within(path, root) for root in policy.writable):
                return escalation_hint(f"writing {path} is not allowed", policy.kind)
    return escalation_hint("a write was refused (the sandbox cannot say where)", policy.kind)


def escalation_hint(what: str, kind: str) -> str:
    if kind == "read-only":  # no escalation from a read-only session
        return f"[sandbox: {what} in read-only mode; the session is read-only, so describe the change instead]"
    return f"[sandbox: {what} in {kind} mode; rerun with escalate: true and a justification if it is needed]"
