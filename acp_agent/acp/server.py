"""The ACP methods: initialize, authenticate, session/new, session/prompt, session/cancel."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from jsonrpcserver import Success
from jsonrpcserver.exceptions import JsonRpcError
from jsonrpcserver.methods import Methods
from pydantic import BaseModel, ValidationError

import acp_agent
from acp_agent.acp import errors
from acp_agent.acp.connection import Connection
from acp_agent.acp.schema import (
    PROTOCOL_VERSION,
    AgentCapabilities,
    AuthenticateParams,
    CancelParams,
    ClientCapabilities,
    Implementation,
    InitializeParams,
    InitializeResult,
    NewSessionParams,
    NewSessionResult,
    PromptParams,
    PromptResult,
    SessionNotification,
    StopReason,
)
from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.agent.agent import Agent
from acp_agent.agent.factory import PUBLISHED
from acp_agent.kernel.context import Context
from acp_agent.session.content import CONTENT_BLOCK_ADAPTER, ContentBlock
from acp_agent.session.events import SessionEvent, TurnEndReason

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)

STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "max-tokens": "max_tokens",
    "max-steps": "max_turn_requests",
    "aborted": "cancelled",
    "disposed": "cancelled",
    "interrupted": "cancelled",
}
PROMPT_BLOCK_TYPES = ("text", "resource_link")


@dataclass(eq=False)
class AcpSession:
    agent: Agent
    prompting: bool = False


class AcpServer:
    """One client's view of the agents: its sessions and what it said it can do."""

    def __init__(self, ctx: Context, conn: Connection) -> None:
        self.ctx = ctx
        self.conn = conn
        self.client = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}
        # Every agent whose activity reaches the wire: its session there, and its mapper.
        self._wire: dict[str, tuple[str, UpdateMapper]] = {}
        ctx.scope.add(ctx.events.on(PUBLISHED, self._on_published))

    async def initialize(self, params: InitializeParams) -> InitializeResult:
        self.client = params.client_capabilities
        return InitializeResult(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="acp-agent", title="acp-agent", version=acp_agent.__version__),
        )

    async def authenticate(self, params: AuthenticateParams) -> dict[str, Any]:
        # No authentication method is advertised, so every id is one we did not offer.
        raise errors.invalid_params(f"methodId {params.method_id!r} is not an advertised authentication method")

    async def new_session(self, params: NewSessionParams) -> NewSessionResult:
        if not os.path.isabs(params.cwd):
            raise errors.invalid_params(f"cwd must be an absolute path, got {params.cwd!r}")
        if params.additional_directories:
            raise errors.invalid_params("additionalDirectories is not supported by this agent")
        if params.mcp_servers:
            log.warning("MCP servers are not supported yet; ignoring %d configured server(s)", len(params.mcp_servers))
        agent = await self.ctx.agents.create(cwd=params.cwd)
        self._watch(agent, agent.id)
        self.sessions[agent.id] = AcpSession(agent)
        return NewSessionResult(session_id=agent.id)

    def _watch(self, agent: Agent, session_id: str, origin: ChildOrigin | None = None) -> None:
        """Forward `agent`'s activity to `session_id` on the wire, now and for its children."""
        mapper = UpdateMapper(lambda name: self.ctx.tools.get(name, agent.scope), origin)
        self._wire[agent.id] = (session_id, mapper)

        def forward(event: SessionEvent) -> None:
            update = mapper.map(event)
            if update is not None:
                notification = SessionNotification(session_id=session_id, update=update)
                self.conn.notify("session/update", notification.dump())

        agent.scope.add(agent.session.subscribe(forward))
        agent.scope.add(lambda: self._wire.pop(agent.id, None))

    def _on_published(self, agent: Agent) -> None:
        header = agent.session.header
        parent = self._wire.get(header.parent_session or "")
        if parent is not None:
            session_id, parent_mapper = parent
            spawn_call = parent_mapper.wire_id(header.spawn_call_id or "")
            self._watch(agent, session_id, ChildOrigin(route=agent.route, parent_tool_call_id=spawn_call))

    async def prompt(self, params: PromptParams) -> PromptResult:
        entry = self._session(params.session_id)
        content = [_content_block(i, block) for i, block in enumerate(params.prompt)]
        if entry.prompting:
            raise JsonRpcError(
                errors.INVALID_REQUEST,
                f"Invalid request: session {params.session_id!r} already has a prompt running;"
                " cancel it or wait for its response",
            )
        entry.prompting = True
        try:
            reason = await entry.agent.followup(content).wait()
        finally:
            entry.prompting = False
        return PromptResult(stop_reason=_stop_reason(reason))

    async def cancel(self, params: CancelParams) -> None:
        entry = self.sessions.get(params.session_id)
        if entry is not None:  # an unknown or idle session: nothing to cancel
            entry.agent.cancel("cancelled by the client")

    def _session(self, session_id: str) -> AcpSession:
        entry = self.sessions.get(session_id)
        if entry is None:
            raise errors.session_not_found(session_id)
        return entry

    async def close(self) -> None:
        """The client went away: cancel every running turn so its prompt answers."""
        for entry in self.sessions.values():
            entry.agent.cancel("the client closed the connection")


def _content_block(index: int, block: dict[str, Any]) -> ContentBlock:
    kind = block.get("type")
    if kind not in PROMPT_BLOCK_TYPES:
        raise errors.invalid_params(
            f"prompt[{index}]: content type {kind!r} is not supported (this agent takes text and resource_link)"
        )
    try:
        return CONTENT_BLOCK_ADAPTER.validate_python(block)
    except ValidationError as exc:
        raise errors.invalid_params(f"prompt[{index}]: {_brief(exc)}") from None


def _stop_reason(reason: TurnEndReason) -> StopReason:
    if reason.kind == "error":
        from acp_agent.llm.codes import MISSING_CREDENTIAL

        if reason.code == MISSING_CREDENTIAL:  # the message names the environment variable to set
            raise JsonRpcError(errors.AUTH_REQUIRED, reason.message)
        raise JsonRpcError(errors.INTERNAL_ERROR, f"Internal error: turn failed: {reason.message}")
    return STOP_REASONS[reason.kind]


def _brief(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, err['loc'])) or 'params'}: {err['msg']}" for err in exc.errors()
    )


Handler = Callable[[AcpServer, Any], Awaitable[BaseModel | dict[str, Any] | None]]


def _method(params_model: type[P], handler: Callable[[AcpServer, P], Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """A jsonrpcserver method: validate the named params, run the handler, dump its result."""

    async def method(conn: Connection, **params: Any) -> Any:
        try:
            parsed = params_model.model_validate(params)
        except ValidationError as exc:
            raise errors.invalid_params(_brief(exc)) from None
        result = await handler(conn.state, parsed)
        return Success(result.dump() if hasattr(result, "dump") else result)

    return method


METHODS: Methods = {
    "initialize": _method(InitializeParams, AcpServer.initialize),
    "authenticate": _method(AuthenticateParams, AcpServer.authenticate),
    "session/new": _method(NewSessionParams, AcpServer.new_session),
    "session/prompt": _method(PromptParams, AcpServer.prompt),
    "session/cancel": _method(CancelParams, AcpServer.cancel),
}
