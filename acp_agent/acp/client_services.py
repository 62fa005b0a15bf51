"""What the client offers the tools: the hook that routes file access and commands to the editor.

`install(ctx, wire)` provides the `workspace` service (file tools) and the `command_runner`
service (`bash`), each asked once per tool call. A call goes to the client only for what the client
advertised in `initialize` (`fs.readTextFile`, `fs.writeTextFile`, `terminal`) and only when its
agent shows on a session of this connection (a child's calls: its top-level session); otherwise it
goes to the disk and to a local process group, the defaults. A service the composition provides
already is left alone.
"""

from __future__ import annotations

from acp_agent.acp.client_fs import ClientWorkspace
from acp_agent.acp.client_terminal import TerminalRunner
from acp_agent.acp.wire import Wire
from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.bash import LOCAL
from acp_agent.tools.runner import RUNNER_SERVICE, CommandRunner
from acp_agent.tools.workspace import DISK, WORKSPACE_SERVICE, Workspace


def install(ctx: Context, wire: Wire) -> Disposer:
    """Provide the two services in `ctx` for `wire`'s client; the disposer withdraws them."""

    def wire_session(call: ToolCallContext) -> str | None:
        shown = wire.wire_of(call.agent.id)
        return shown.session_id if shown is not None else None

    def workspace(call: ToolCallContext) -> Workspace:
        fs = wire.client.fs
        session_id = wire_session(call)
        if session_id is None or not (fs.read_text_file or fs.write_text_file):
            return DISK
        return ClientWorkspace(wire.conn, session_id, read=fs.read_text_file, write=fs.write_text_file)

    def runner(call: ToolCallContext) -> CommandRunner:
        session_id = wire_session(call)
        if session_id is None or not wire.client.terminal:
            return LOCAL
        return TerminalRunner(wire.conn, session_id)

    provided = [] if ctx.has(WORKSPACE_SERVICE) else [ctx.provide(WORKSPACE_SERVICE, workspace)]
    if not ctx.has(RUNNER_SERVICE):
        provided.append(ctx.provide(RUNNER_SERVICE, runner))
    return combine(*provided)
