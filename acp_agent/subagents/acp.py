"""The `acp` provider: any ACP agent, run as a child process, as a child agent. Loader plugin.

The child is represented here by a *stand-in*: a published child agent (route, lineage and log
as any child's) whose every turn (`Agent.turn_body`) sends one `session/prompt` to the child
process's session and logs what the child reports: each `session/update` as an `acp/update`
event, its text as the turn's answer (`assistant/message`). So the one-shot result, background
mode, `send_message` (another turn: another `session/prompt` on the same child session),
`stop_agent` and cancels (`session/cancel`) work as for an in-process child.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Final, Literal
from weakref import WeakKeyDictionary

import anyio

from acp_agent.agent.agent import DISPOSING, Agent
from acp_agent.agent.factory import Lineage
from acp_agent.agent.keys import AGENTS
from acp_agent.environ.variables import child_environment
from acp_agent.kernel.context import Context
from acp_agent.kernel.models import Model
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.llm.holds import AGENT_KNOWN
from acp_agent.mcp.session import MCP
from acp_agent.processes.registry import PROCESSES
from acp_agent.session.content import TextBlock, TextContent
from acp_agent.session.events import (
    AssistantMessageData,
    AssistantMessageEvent,
    SessionEvent,
    StepData,
    StepEndEvent,
    StepStartEvent,
    TurnAborted,
    TurnCompleted,
    TurnEndReason,
    TurnFailed,
    TurnMaxSteps,
    TurnMaxTokens,
    UserMessageEvent,
)
from acp_agent.subagents import texts
from acp_agent.subagents.acp_client import CANCELLED, AcpChild, AcpChildError, Handlers
from acp_agent.subagents.acp_files import serve_fs
from acp_agent.subagents.acp_terminals import PREFIX as TERMINAL
from acp_agent.subagents.acp_terminals import Terminals
from acp_agent.subagents.driver import InProcessRun, child_depth, child_route
from acp_agent.subagents.keys import PERMISSION_FORWARDER
from acp_agent.subagents.registry import SUBAGENTS, Capabilities, SubagentRequest
from acp_agent.tools.roots import roots_of, use_roots

UPDATE_EVENT: Final = "acp/update"
ROUTE_VARIABLE: Final = "ACP_AGENT_ROUTE"
"""The stand-in's route, in the child's environment: an acp-agent child names its sessions'
routes under it (the packaged composition's `agents` row `routeBase`), so its logs say whose
child it is and a replayed scenario's child process replays its own routes."""
REFUSED = "the ACP agent refused the request"
CANCELLED_BY_CHILD = "the ACP agent cancelled its turn"


class AcpUpdateData(Model):
    update: dict[str, Any]
    """The `session/update`'s `update`, as the child sent it."""


class AcpUpdateEvent(SessionEvent):
    """`acp/update` (turn-enclosed): one `session/update` of an ACP child, in its stand-in's log
    (registered by the `subagents` plugin, so any composition loads such a log)."""

    type: Literal["acp/update"] = UPDATE_EVENT
    data: AcpUpdateData


def _ending(stop_reason: str) -> TurnEndReason:
    match stop_reason:
        case "max_tokens":
            return TurnMaxTokens()
        case "max_turn_requests":
            return TurnMaxSteps()
        case "refusal":
            return TurnFailed(message=REFUSED, code="refusal")
        case "cancelled":
            return TurnAborted(reason=CANCELLED_BY_CHILD)
    return TurnCompleted()


def _prompt_text(agent: Agent) -> str:
    """The turn's message (the last event: the body runs right after it is logged)."""
    last = agent.session.events[-1] if agent.session.events else None
    if not isinstance(last, UserMessageEvent):
        return ""
    return "".join(block.text for block in last.data.content if isinstance(block, TextContent))


def _mcp_servers(parent: Agent) -> list[dict[str, Any]]:
    """The MCP servers the editor gave the parent's session (`mcpServers`, as it sent them)."""
    service = parent.ctx.find(MCP)
    session = service.of(parent.ctx.get(AGENTS).top_level(parent)) if service is not None else None
    if session is None:
        return []
    # A stdio server has no `type` on the wire (`McpServerStdio`); the others keep theirs.
    return [{k: v for k, v in spec.dump().items() if (k, v) != ("type", "stdio")} for spec in session.specs]


class StandIn:
    """The turn body of one stand-in: each turn is one prompt of the child's session."""

    def __init__(self, child: AcpChild, session_id: str) -> None:
        self.child = child
        self.session_id = session_id

    async def turn(self, agent: Agent, turn: int) -> TurnEndReason:
        session = agent.session
        said: list[str] = []

        def update(raw: dict[str, Any]) -> None:
            session.append(AcpUpdateEvent, AcpUpdateData(update=raw))
            content = raw.get("content")
            if raw.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
                text = content.get("text")
                if isinstance(text, str):
                    said.append(text)

        async def ask(request: dict[str, Any]) -> dict[str, Any]:
            forwarder = agent.ctx.find(PERMISSION_FORWARDER)
            return CANCELLED if forwarder is None else await forwarder.ask(agent, request)

        async with anyio.create_task_group() as tasks:
            terminals = Terminals(agent, tasks)

            async def serve(method: str, params: dict[str, Any]) -> Any:
                if method.startswith(TERMINAL):
                    return await terminals.serve(method, params)
                return await serve_fs(agent, method, params)

            try:
                stop_reason = await self.child.prompt(
                    self.session_id, _prompt_text(agent), Handlers(update, ask, serve)
                )
            except AcpChildError as exc:
                return TurnFailed(message=str(exc), code=texts.ACP_CHILD_FAILED)
            finally:
                terminals.close()  # what the child left running ends with its prompt
        if said:
            step = session.state.last_step + 1
            session.append(StepStartEvent, StepData(turn=turn, step=step))
            message = AssistantMessageData(turn=turn, step=step, content=[TextBlock(text="".join(said))])
            session.append(AssistantMessageEvent, message)
            session.append(StepEndEvent, StepData(turn=turn, step=step))
        return _ending(stop_reason)


class AcpProvider:
    """Runs `argv` as an ACP agent for each child; only `depthLimit` is honoured (what the child
    does inside is its own: its tools, its model, its own children)."""

    capabilities = Capabilities(depth_limit=True)

    def __init__(self, name: str, title: str, argv: list[str], env: dict[str, str], startup_timeout: float) -> None:
        self.name = name
        self.title = title
        self.argv = argv
        self.env = env
        self.startup_timeout = startup_timeout
        self._children: WeakKeyDictionary[Agent, AcpChild] = WeakKeyDictionary()

    async def start(self, request: SubagentRequest) -> InProcessRun:
        parent = request.parent
        depth = child_depth(parent, request.max_depth)
        ctx = parent.ctx
        cwd = Path(parent.session.cwd or ".")
        roots = roots_of(parent)
        route = child_route(parent, request.spawn_call_id)
        owner = ctx.scope.child()  # the process's: it ends with the stand-in, or with a failed start
        try:
            group = ctx.get(PROCESSES).group(owner) if ctx.has(PROCESSES) else None
            env = {**child_environment(ctx), **self.env, ROUTE_VARIABLE: route}
            child = await AcpChild.start(self.title, self.argv, cwd=cwd, env=env, group=group)
            owner.add(child.kill)
            try:
                session_id = await child.handshake(self.startup_timeout, cwd, _mcp_servers(parent), roots.additional)

                def setup(agent: Agent) -> None:
                    agent.turn_body = StandIn(child, session_id).turn
                    agent.scope.add(owner.dispose)
                    if roots.additional:  # what the child asks of us (fs/*, terminal/*) reaches its roots
                        use_roots(agent, roots)

                agent = await ctx.get(AGENTS).create(
                    cwd=parent.session.cwd,
                    route=route,
                    options=request.agent_options or parent.options,
                    lineage=Lineage(
                        parent_session=parent.id, delegation_depth=depth, spawn_call_id=request.spawn_call_id
                    ),
                    setup=setup,
                )
            except BaseException:
                await child.close()
                raise
        except BaseException:
            owner.dispose()
            raise
        self._children[agent] = child
        ctx.events.emit(AGENT_KNOWN, agent.route, agent.id)  # it never asks a model for a call
        ticket = agent.followup([TextContent(text=request.prompt)])
        return InProcessRun(agent, ticket, 0, None)

    async def disposing(self, agent: Agent) -> None:
        """A stand-in that is not mid-turn ends its child gently (EOF, SIGTERM, SIGKILL); one
        mid-turn has its prompt cancelled by the loop's stop, and its process killed with it."""
        child = self._children.pop(agent, None)
        if child is not None and not agent.in_turn:
            await child.close()


name = "subagent-acp"
inject = ("subagents", "agents")


class Config(PluginConfig):
    provider_name: str = "acp"
    command: str
    args: list[str] = []
    env: dict[str, str] = {}
    """Added to the server's environment, from which the credential variables are removed."""
    startup_timeout: float = 30.0
    """Seconds the agent has to answer `initialize` and `session/new`."""
    title: str | None = None
    """What errors call the agent (default: its command line)."""


def apply(ctx: Context, config: Config) -> Disposer:
    argv = [config.command, *config.args]
    title = config.title or shlex.join(argv)
    provider = AcpProvider(config.provider_name, title, argv, config.env, config.startup_timeout)
    return combine(
        ctx.get(SUBAGENTS).register(provider),
        ctx.events.on(DISPOSING, provider.disposing),
    )
