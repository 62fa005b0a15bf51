"""An ACP child's `fs/read_text_file` and `fs/write_text_file`, served as the parent's file tools
are: through the workspace they use (the editor's buffers when it offers them, else the disk),
inside the thread's cwd."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from acp_agent.agent.agent import Agent
from acp_agent.sandbox.policy import READ_ONLY
from acp_agent.subagents.acp_client import Refused, not_served
from acp_agent.subagents.acp_terminals import thread_policy
from acp_agent.tools import confined
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.errors import OutsideWorkspace
from acp_agent.tools.workspace import workspace_for

READ: Final = "fs/read_text_file"
WRITE: Final = "fs/write_text_file"
READ_ONLY_WRITE: Final = "the thread is in Read-only mode: no file changes"
FS_CALL: Final = "acp-fs"
"""The call id of the context an ACP child's file access goes through (it is no tool call)."""


async def serve_fs(agent: Agent, method: str, params: dict[str, Any]) -> Any:
    """An ACP child's `fs/read_text_file` or `fs/write_text_file`, through the workspace the
    parent's file tools use (the editor's buffers when it offers them, else the disk), inside
    the thread's cwd (`tools.confined`: `..` and symbolic links resolved); no write while the
    parent's mode is *Read-only*."""
    if method not in (READ, WRITE):
        return await not_served(method, params)
    cwd = Path(agent.session.cwd or ".")
    try:
        target = confined.resolve_in(cwd, str(params.get("path")))
        workspace = workspace_for(ToolCallContext(call_id=FS_CALL, cwd=cwd, agent=agent))
        if method == WRITE:
            if thread_policy(agent) == READ_ONLY:
                raise Refused(-32603, READ_ONLY_WRITE)
            await workspace.write_text(target, str(params.get("content", "")))
            return None
        text = await workspace.read_text(target)
    except FileNotFoundError as exc:
        raise Refused(-32002, f"Resource not found: {params.get('path')}") from exc
    except (OSError, UnicodeDecodeError, OutsideWorkspace) as exc:
        raise Refused(-32603, str(exc)) from exc
    line, limit = params.get("line"), params.get("limit")
    if isinstance(line, int) or isinstance(limit, int):
        start = max(line - 1, 0) if isinstance(line, int) else 0
        lines = text.splitlines(keepends=True)
        text = "".join(lines[start : start + limit] if isinstance(limit, int) else lines[start:])
    return {"content": text}
