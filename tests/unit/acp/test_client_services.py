"""`client_services.install`: which workspace and which command runner a call gets, from what the
client advertised and where the call's agent shows on the wire."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from acp_agent.acp import client_services
from acp_agent.acp.client_fs import ClientWorkspace
from acp_agent.acp.client_terminal import TerminalRunner
from acp_agent.acp.connection import Connection
from acp_agent.acp.schema import ClientCapabilities, FileSystemCapabilities
from acp_agent.acp.updates import UpdateMapper
from acp_agent.acp.wire import AgentWire, Wire
from acp_agent.kernel.context import Context
from acp_agent.session.events import SessionHeader
from acp_agent.session.log import Session
from acp_agent.session.registry import default_registry
from acp_agent.tools import LOCAL, RUNNER_SERVICE, WORKSPACE_SERVICE, DiskWorkspace, ToolCallContext
from acp_agent.tools.bash import runner_for
from acp_agent.tools.workspace import workspace_for

from ..tools.helpers import caller


class Server:
    """A context and the wire `install` serves: `child-agent` shows on `top-session`; the
    connection is a placeholder the client services hold on to (nothing is sent here)."""

    def __init__(self, client: ClientCapabilities | None = None) -> None:
        self.ctx = Context()
        self.wire = Wire(cast(Connection, object()))
        self.wire.client = client or ClientCapabilities()
        self.wire.show("child-agent", AgentWire("top-session", UpdateMapper(lambda name: None)))

    def install(self) -> Callable[[], None]:
        return client_services.install(self.ctx, self.wire)


def call_of(server: Server, agent_id: str = "child-agent") -> ToolCallContext:
    session = Session(SessionHeader(id=agent_id, created_at=0, cwd="/work"), registry=default_registry())
    return ToolCallContext(call_id="call_1", cwd=Path("/work"), agent=caller(session, server.ctx))


def test_a_client_that_advertises_nothing_gets_the_disk_and_local_processes() -> None:
    server = Server()
    server.install()
    call = call_of(server)
    assert isinstance(workspace_for(call), DiskWorkspace)
    assert runner_for(call) is LOCAL


def test_what_the_client_advertises_goes_through_it_on_the_top_level_session() -> None:
    server = Server(client=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True), terminal=True))
    server.install()
    call = call_of(server)
    workspace = workspace_for(call)
    assert isinstance(workspace, ClientWorkspace)
    assert (workspace.session_id, workspace.read, workspace.write) == ("top-session", True, False)
    runner = runner_for(call)
    assert isinstance(runner, TerminalRunner) and runner.session_id == "top-session" and runner.conn is server.wire.conn


def test_capabilities_are_read_at_each_call_so_initialize_may_come_after_install() -> None:
    server = Server()
    server.install()
    server.wire.client = ClientCapabilities(fs=FileSystemCapabilities(write_text_file=True))
    workspace = workspace_for(call_of(server))
    assert isinstance(workspace, ClientWorkspace) and (workspace.read, workspace.write) == (False, True)


def test_an_agent_not_shown_on_this_connection_keeps_the_defaults() -> None:
    server = Server(client=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True), terminal=True))
    server.install()
    call = call_of(server, "elsewhere")
    assert isinstance(workspace_for(call), DiskWorkspace)
    assert runner_for(call) is LOCAL


def test_a_service_the_composition_provides_is_left_alone_and_the_disposer_withdraws_ours() -> None:
    server = Server()
    mine = object()
    server.ctx.provide(WORKSPACE_SERVICE, mine)
    dispose = server.install()
    assert server.ctx.get(WORKSPACE_SERVICE) is mine and server.ctx.has(RUNNER_SERVICE)
    dispose()
    assert server.ctx.get(WORKSPACE_SERVICE) is mine and not server.ctx.has(RUNNER_SERVICE)
