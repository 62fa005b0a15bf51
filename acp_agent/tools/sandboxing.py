"""The argv and environment a command runs with: behind the sandbox's prefix when its call's policy
confines it (`ToolCallContext.sandbox`), with the session's private temporary directory as
`TMPDIR`. Every runner (a local process group, the editor's terminal) builds its argv here, so no
path runs a confined command unconfined.
"""

from __future__ import annotations

from pathlib import Path

from acp_agent.kernel.context import Context
from acp_agent.sandbox import texts
from acp_agent.sandbox.errors import SandboxUnavailable
from acp_agent.sandbox.policy import FULL_ACCESS, WORKSPACE_WRITE, Kind
from acp_agent.sandbox.service import SANDBOX
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.errors import CommandNotStarted
from acp_agent.tools.scratch import scratch_dir

NO_SANDBOX = "this agent has no sandbox configured (its composition has no acp_agent.sandbox.plugin row)"


def policy_kind(call: ToolCallContext) -> Kind:
    """The policy `call` runs under: the approval gate's ruling; without one, `workspace-write`
    where a sandbox is composed (and no confinement where none is: nothing claims one)."""
    if call.sandbox is not None:
        return call.sandbox
    return WORKSPACE_WRITE if call.ctx.has(SANDBOX) else FULL_ACCESS


def sandbox_prefix(call: ToolCallContext) -> list[str]:
    """What goes before a command's argv (`bash -c ...`) so it runs as `call`'s policy says (empty:
    unconfined). Raises `CommandNotStarted` (fail closed) when the policy confines and no sandbox
    can."""
    kind = policy_kind(call)
    if kind == FULL_ACCESS:
        return []
    sandbox = call.ctx.find(SANDBOX)
    try:
        if sandbox is None:
            raise SandboxUnavailable(NO_SANDBOX)
        prefix = sandbox.prefix(kind, call.cwd, scratch_dir(call), call.roots.additional)
    except SandboxUnavailable as exc:
        raise CommandNotStarted(texts.unavailable(str(exc))) from None
    return prefix


def unavailable(ctx: Context) -> str | None:
    """Why a confined command cannot run in `ctx` (the fail-closed message), or None when it can."""
    sandbox = ctx.find(SANDBOX)
    if sandbox is None:
        return texts.unavailable(NO_SANDBOX)
    backend = sandbox.backend
    return texts.unavailable("; ".join(backend.notes)) if backend.name == "none" else None


def command_env(call: ToolCallContext) -> dict[str, str]:
    """What a command's environment adds to the server's (less its credentials)."""
    return {"TMPDIR": str(scratch_dir(call))}


def writable_roots(call: ToolCallContext) -> tuple[Path, ...]:
    """Where the file tools may write for `call`: the session's cwd (as the editor gave it) first,
    its additional roots, then the other roots a `workspace-write` command may change, read from
    the sandbox's one statement of them (`Sandbox.writable`), whatever the mode (the file tools
    keep their own confinement; `plan` refuses their calls at the gate). The cwd and the
    additional roots where no sandbox is composed."""
    sandbox = call.ctx.find(SANDBOX)
    if sandbox is None:
        return (call.cwd, *call.roots.additional)
    others = sandbox.writable(WORKSPACE_WRITE, call.cwd, scratch_dir(call), call.roots.additional)
    return (call.cwd, *map(Path, others[1:]))  # the first is the cwd, resolved


def refused_write(output: str, call: ToolCallContext) -> str | None:
    """The line a failed confined command's result gets when the sandbox seems to have refused a
    write (None: not confined, or nothing refused)."""
    kind = policy_kind(call)
    sandbox = call.ctx.find(SANDBOX)
    if kind == FULL_ACCESS or sandbox is None:
        return None
    policy = sandbox.policy(kind, call.cwd, scratch_dir(call), call.roots.additional)
    return texts.denied_write(output, policy, str(call.cwd))
