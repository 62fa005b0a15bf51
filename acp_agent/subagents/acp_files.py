"""An ACP child's `fs/read_text_file` and `fs/write_text_file`, served as the parent's file tools
are: where they may read and write (`tools.files.resolve_for_reading`, and for writes
`tools.files.resolve_writable`: `tools.sandboxing.writable_roots`, the one statement of where
may be written), through the
workspace they use (the editor's buffers when it offers them, else the disk; another root than
the cwd is on the disk)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from acp_agent.agent.agent import Agent
from acp_agent.sandbox.policy import READ_ONLY
from acp_agent.subagents.acp_client import Refused, not_served
from acp_agent.subagents.acp_terminals import thread_policy
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.errors import OutsideWorkspace, ScratchGone
from acp_agent.tools.files import resolve_for_reading, resolve_writable
from acp_agent.tools.workspace import DISK, workspace_for

READ: Final = "fs/read_text_file"
WRITE: Final = "fs/write_text_file"
READ_ONLY_WRITE: Final = "the thread is in Read-only mode: no file changes"
FS_CALL: Final = "acp-fs"
"""The call id of the context an ACP child's file access goes through (it is no tool call)."""


async def serve_fs(agent: Agent, method: str, params: dict[str, Any]) -> Any:
    """An ACP child's `fs/read_text_file` or `fs/write_text_file`, as the stand-in's own file
    tools would: a path in the thread's cwd (`..` and symbolic links resolved, `tools.confined`),
    or by an absolute path in another root they may reach (a write: one of `writable_roots`);
    no write while the parent's mode is *Read-only*."""
    if method not in (READ, WRITE):
        return await not_served(method, params)
    call = ToolCallContext(call_id=FS_CALL, cwd=Path(agent.session.cwd or "."), agent=agent)
    path = str(params.get("path"))
    try:
        if method == WRITE:
            if thread_policy(agent) == READ_ONLY:
                raise Refused(-32603, READ_ONLY_WRITE)
            target = resolve_writable(call, path)
            await (DISK if target.other_root else workspace_for(call)).write_text(
                target, str(params.get("content", ""))
            )
            return None
        target, elsewhere = resolve_for_reading(call, path)
        text = await (DISK if elsewhere else workspace_for(call)).read_text(target)
    except (FileNotFoundError, ScratchGone) as exc:
        raise Refused(-32002, f"Resource not found: {path}") from exc
    except (OSError, UnicodeDecodeError, OutsideWorkspace) as exc:
        raise Refused(-32603, str(exc)) from exc
    line, limit = params.get("line"), params.get("limit")
    if isinstance(line, int) or isinstance(limit, int):
        start = max(line - 1, 0) if isinstance(line, int) else 0
        lines = text.splitlines(keepends=True)
        text = "".join(lines[start : start + limit] if isinstance(limit, int) else lines[start:])
    return {"content": text}
