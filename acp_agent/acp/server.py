"""The ACP methods: initialize, authenticate, session/new, session/prompt, session/cancel, and the
session lifecycle: session/load, session/list, session/resume, session/close, session/delete."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

import acp_agent
from acp_agent.acp import (
    auth,
    client_services,
    elicitation,
    errors,
    foreign,
    modes,
    permission_client,
    trust_client,
)
from acp_agent.acp.children import ChildSession, stop_reason, woken_turn
from acp_agent.acp.connection import Connection
from acp_agent.acp.jsonrpc import JsonRpcError, Methods, Success
from acp_agent.acp.lifecycle import LIST_PAGE_SIZE, Lifecycle
from acp_agent.acp.plugin import CONNECTION, ConnectionConfig
from acp_agent.acp.schema import (
    PROTOCOL_VERSION,
    AgentCapabilities,
    AuthenticateParams,
    AvailableCommand,
    AvailableCommandsUpdate,
    CancelParams,
    CloseSessionParams,
    CloseSessionResult,
    DeleteSessionParams,
    DeleteSessionResult,
    ForkSessionParams,
    ForkSessionResult,
    Implementation,
    InitializeParams,
    InitializeResult,
    ListSessionsParams,
    ListSessionsResult,
    LoadSessionParams,
    LogoutParams,
    McpCapabilities,
    NewSessionParams,
    NewSessionResult,
    OpenSessionResult,
    PromptCapabilities,
    PromptParams,
    PromptResult,
    ResumeSessionParams,
    SessionCapabilities,
    SetSessionConfigOptionParams,
    SetSessionModeParams,
    SetSessionTitleParams,
    SetSessionTitleResult,
    SteeringParams,
    SteeringResult,
    StopReason,
    Supported,
    SystemPrompt,
    SystemPromptCapabilities,
    SystemPromptModes,
    TerminalAuthMethod,
    UnstructuredCommandInput,
)
from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.acp.wire import AcpSession, AgentWire, Wire
from acp_agent.agent.agent import Agent
from acp_agent.agent.config import model_entry
from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.keys import AGENTS
from acp_agent.agent.prompt import ClientPromptMode, use_client_prompt
from acp_agent.commands.announce import Announcer
from acp_agent.commands.registry import COMMANDS, Command
from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Scope
from acp_agent.llm.codes import MISSING_CREDENTIAL
from acp_agent.llm.service import LLM
from acp_agent.mcp.servers import ServerSpec, UnsupportedServer, parse_servers
from acp_agent.mcp.session import MCP
from acp_agent.session.content import (
    CONTENT_BLOCK_ADAPTER,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    block_problem,
    is_blank,
)
from acp_agent.session.errors import (
    LogUnwritable,
    TurnsOutOfRange,
)
from acp_agent.session.events import (
    AssistantChunkEvent,
    SessionEvent,
    StreamedChunk,
    ToolResultEvent,
    TurnEndReason,
)
from acp_agent.session.log import completed_turn_prefix
from acp_agent.session.titles import TitleData, one_line
from acp_agent.subagents.driver import INHERIT
from acp_agent.tools.base import Tool
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.roots import InvalidRoot, Roots, inherit_roots, use_roots
from acp_agent.trust.service import TRUST

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)

PROMPT_BLOCK_TYPES = ("text", "resource_link", "resource", "image")
CANCELLED_BY_CLIENT = "cancelled by the client"
EXTENSIONS = {"acpAgent": {"promptQueueing": True}}
"""`agentCapabilities._meta`: what this agent does beyond the protocol. `promptQueueing`: a prompt
sent while another runs is queued, not refused (`prompt`)."""
INITIALIZE_META = {"steering": {"supported": True}}
"""The `initialize` result's `_meta`: `_session/steering` is served (`steer`), in the shape other
agents (codex-acp, claude-agent-acp) announce it."""


class AcpServer:
    """One client's view of the agents: its sessions and what it said it can do."""

    def __init__(self, ctx: Context, conn: Connection, *, list_page_size: int = LIST_PAGE_SIZE) -> None:
        self.ctx = ctx
        self.conn = conn
        self.wire = Wire(conn)
        """The connection as the helpers see it: its client, sessions, where agents show (wire.py)."""
        self.auth_methods: list[TerminalAuthMethod] = []
        """The authentication methods `initialize` offered this client."""
        self.lifecycle = Lifecycle(ctx, self.wire, list_page_size=list_page_size)
        """Opening, closing, deleting and naming its sessions (lifecycle.py)."""
        ctx.scope.add(ctx.events.on(PUBLISHED, self._on_published))
        # File tools and bash go through the client for what it advertises (client_services.py).
        ctx.scope.add(client_services.install(ctx, self.wire))
        # Tools that need approval ask the user through this client (permission_client.py).
        ctx.scope.add(permission_client.install(ctx, self.wire))
        # ACP agents run as children ask the user through this client too (foreign.py).
        ctx.scope.add(foreign.install(ctx, self.wire))
        # A project's hooks, servers and allow rules wait for the user's trust (trust_client.py).
        ctx.scope.add(trust_client.install(ctx, self.wire))
        # A session of a client that answers forms may ask the user questions (elicitation.py).
        ctx.scope.add(elicitation.install(ctx, self.wire))
        # A child works in its parent's roots (the cwd and the client's additional directories).
        ctx.scope.add(ctx.events.on(INHERIT, inherit_roots))
        self.commands = ctx.find(COMMANDS)
        if self.commands is not None:
            ctx.scope.add(self.commands.on_change(self._commands_changed))

    async def initialize(self, params: InitializeParams) -> InitializeResult:
        self.wire.client = params.client_capabilities
        credentials = self.ctx.get(LLM).credentials
        self.auth_methods = auth.auth_methods(credentials, self.wire.client)
        return InitializeResult(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # Per connection, before any session: images if any model offered takes them.
                prompt_capabilities=PromptCapabilities(image=self._takes_images(), embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True) if self.ctx.has(MCP) else None,
                session_capabilities=SessionCapabilities(
                    list=Supported(),
                    resume=Supported(),
                    close=Supported(),
                    delete=Supported(),
                    additional_directories=Supported(),
                    title=Supported(),
                    fork=Supported(),
                    system_prompt=SystemPromptCapabilities(
                        mode=SystemPromptModes(override=Supported()) if self._override_allowed() else None
                    ),
                ),
                meta=EXTENSIONS,
                auth=auth.auth_capabilities(credentials),
            ),
            agent_info=Implementation(name="acp-agent", title="acp-agent", version=acp_agent.__version__),
            auth_methods=self.auth_methods,
            meta=INITIALIZE_META,
        )

    async def authenticate(self, params: AuthenticateParams) -> dict[str, Any]:
        # The only method ever offered is the terminal sign-in, which clients must not pass here.
        raise errors.invalid_params(auth.not_for_authenticate(params.method_id, self.auth_methods))

    async def logout(self, params: LogoutParams) -> dict[str, Any]:
        auth.logout(self.ctx.get(LLM).credentials)
        return {}

    async def new_session(self, params: NewSessionParams) -> NewSessionResult:
        workspace = self._check_workspace(params.cwd, params.additional_directories, params.mcp_servers)
        if not os.path.isdir(params.cwd):  # every tool would fail there; a stored session's is not checked
            raise errors.invalid_params(f"cwd {params.cwd!r} is not an existing directory")
        instructions = self._client_prompt(params.system_prompt)
        try:
            agent = await self.ctx.get(AGENTS).create(cwd=params.cwd)
        except LogUnwritable as exc:  # the sessions directory went read-only, full, or away
            raise errors.internal_error(f"cannot start a session: {exc}") from None
        use_roots(agent, workspace.roots)
        if instructions is not None:
            use_client_prompt(agent, *instructions)
        self._connect(agent, workspace.servers)
        self._open(agent)
        return NewSessionResult(session_id=agent.id, **modes.session_state(self.ctx, agent))

    def _connect(self, agent: Agent, servers: list[ServerSpec]) -> None:
        """Connect the session's MCP servers once its answer is out (the SDK's import and the
        servers' start-up must not hold it up). Called before `_open`, so the servers' `/mcp` is
        in the first command list the session announces."""
        mcp = self.ctx.find(MCP)
        if mcp is not None:  # the project's own servers (`.mcp.json`) may come beside the client's
            self.conn.when_answered(lambda: mcp.open(agent, servers))

    # -- the session lifecycle (lifecycle.py) ---------------------------------------------------

    async def load_session(self, params: LoadSessionParams) -> OpenSessionResult:
        """Reopen a stored session and replay it as `session/update`s before answering."""
        agent = await self._reopen(params, True)
        return OpenSessionResult(**modes.session_state(self.ctx, agent))

    async def resume_session(self, params: ResumeSessionParams) -> OpenSessionResult:
        """Reopen a stored session without replaying it."""
        agent = await self._reopen(params, False)
        return OpenSessionResult(**modes.session_state(self.ctx, agent))

    async def _reopen(self, params: LoadSessionParams | ResumeSessionParams, replay: bool) -> Agent:
        session_id, cwd = params.session_id, params.cwd
        if session_id in self.wire.child_ids:
            raise errors.subagent_session(session_id)
        workspace = self._check_workspace(cwd, params.additional_directories, params.mcp_servers)
        instructions = self._client_prompt(params.system_prompt)
        async with self.lifecycle.one_at_a_time(session_id):
            agent = await self.lifecycle.reopen(session_id, cwd, replay=replay)
            use_roots(agent, workspace.roots)  # as the request names them (none: the cwd alone)
            if instructions is not None:  # as the request names it: the log's earlier ones are history
                use_client_prompt(agent, *instructions)
            self._connect(agent, workspace.servers)
            self._open(agent)
            return agent

    def _open(self, agent: Agent) -> None:
        """Show a top-level agent as a session of this client; its command list goes out once the
        answer that names the session has (editors drop updates for sessions they do not know)."""
        self._watch(agent, agent.id)
        entry = self.wire.sessions[agent.id] = AcpSession(agent)
        trust = self.ctx.find(TRUST)
        if trust is not None:  # asked right after the answer, before anything of the project runs
            self.conn.when_answered(lambda: trust.open(agent))
        if self.commands is not None:
            entry.commands = Announcer(self.commands, agent, partial(self._send_commands, agent.id))
            self.conn.when_answered(entry.commands.start)

    def _send_commands(self, session_id: str, commands: Sequence[Command]) -> None:
        offered = [
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=None if command.input_hint is None else UnstructuredCommandInput(hint=command.input_hint),
            )
            for command in commands
        ]
        self.wire.update(session_id, AvailableCommandsUpdate(available_commands=offered))

    def _commands_changed(self) -> None:
        for entry in list(self.wire.sessions.values()):
            if entry.commands is not None:
                entry.commands.refresh()

    async def list_sessions(self, params: ListSessionsParams) -> ListSessionsResult:
        """The stored top-level sessions someone prompted, most recently active first, a page at a
        time; `cwd` keeps those of one working directory."""
        return self.lifecycle.page(params.cwd, params.cursor)

    async def close_session(self, params: CloseSessionParams) -> CloseSessionResult:
        """Close an open session (`Lifecycle.close_open`)."""
        await self.lifecycle.close_open(params.session_id)
        return CloseSessionResult()

    async def delete_session(self, params: DeleteSessionParams) -> DeleteSessionResult:
        """Close the session if it is open here, then remove its log and its children's
        (`Lifecycle.delete`)."""
        await self.lifecycle.delete(params.session_id)
        return DeleteSessionResult()

    async def set_title(self, params: SetSessionTitleParams) -> SetSessionTitleResult:
        """Name a stored session, open or closed: the title is logged (`session/title`, the
        user's, which a model's never replaces), shown by `session/list`, and sent as a
        `session_info_update` when the session is open here."""
        session_id = params.session_id
        title = one_line(params.title)
        if title is None:
            raise errors.invalid_params("title is empty")
        await self.lifecycle.name(session_id, TitleData(title=title, source="user"))
        return SetSessionTitleResult(title=title)

    async def fork_session(self, params: ForkSessionParams) -> ForkSessionResult:
        """A new session whose history is the source's ended turns (all, or the first
        `_meta.acpAgent.turns`): its own id and log, its header naming the source, listed and
        loaded like any session; the source is only read."""
        source_id = params.session_id
        if source_id in self.wire.child_ids:
            raise errors.subagent_session(source_id)
        workspace = self._check_workspace(params.cwd, params.additional_directories, params.mcp_servers)
        if not os.path.isdir(params.cwd):  # every tool would fail there; a stored session's is not checked
            raise errors.invalid_params(f"cwd {params.cwd!r} is not an existing directory")
        instructions = self._client_prompt(params.system_prompt)
        turns = _forked_turns(params.meta)
        entry = self.wire.sessions.get(source_id)
        if entry is not None:  # open here: what it logged so far, its chunks read back
            header, events = entry.agent.session.header, entry.agent.session.all_events()
        else:
            self.lifecycle.top_level(source_id, "fork")
            header, events = self.lifecycle.stored_events(source_id)
        try:
            seed = completed_turn_prefix(events, turns)
        except TurnsOutOfRange as exc:
            raise errors.invalid_params(f"cannot fork session {source_id!r} after {turns} turn(s): {exc}") from None
        try:
            agent = await self.ctx.get(AGENTS).fork(header, seed, cwd=params.cwd)
        except LogUnwritable as exc:
            raise errors.internal_error(f"cannot start a session: {exc}") from None
        use_roots(agent, workspace.roots)
        if instructions is not None:
            use_client_prompt(agent, *instructions)
        self._connect(agent, workspace.servers)
        self._open(agent)
        return ForkSessionResult(session_id=agent.id, **modes.session_state(self.ctx, agent))

    def _watch(
        self, agent: Agent, session_id: str, origin: ChildOrigin | None = None, child: ChildSession | None = None
    ) -> None:
        """Forward `agent`'s activity to `session_id` on the wire, now and for its children
        (`child`: it shows as a child session)."""
        connection = self.ctx.find(CONNECTION) or ConnectionConfig()
        mapper = UpdateMapper(
            partial(self._tool_of, agent.scope),
            origin,
            context_window=agent.options.context_window,
            shown=agent.session.events,  # a loaded session's: its title was shown already
            notices=self.wire.client.notices,
            compaction=self.wire.client.compaction,
            plans=self.wire.client.plans,
            answer_every_ms=connection.child_answer_every_ms,
        )
        shown_on = AgentWire(session_id, mapper, child)
        agent.scope.add(self.wire.show(agent.id, shown_on))

        forward = _Forward(self.wire, session_id, mapper, shown_on, child, top_level=origin is None)
        agent.scope.add(agent.session.subscribe(forward.event, chunks=forward.chunk))

    def _takes_images(self) -> bool:
        """Whether any model offered takes images: the connection's `promptCapabilities.image`."""
        return any(entry.vision for entry in self.ctx.get(AGENTS).models)

    def _tool_of(self, scope: Scope, name: str) -> Tool[Any] | None:
        """The tool `name` as the agent of `scope` sees it (each open session's mapper holds a
        partial of this bound to its scope, not a closure: README, Performance)."""
        return self.ctx.get(TOOLS).get(name, scope)

    def _on_published(self, agent: Agent) -> None:
        header = agent.session.header
        parent = self.wire.wire_of(header.parent_session or "")
        if parent is None:
            return
        self.wire.child_ids.add(agent.id)
        call_id = header.spawn_call_id or ""
        origin = ChildOrigin(route=agent.route, parent_tool_call_id=parent.mapper.wire_id(call_id))
        if not self.wire.client.child_sessions:
            self._watch(agent, parent.session_id, origin)
            return
        # Announced before anything of it goes out: it is published, its loop has not started.
        child, opening = ChildSession.opened(header, agent.route, parent.session_id, parent.mapper)
        parent.children[call_id] = child
        self.wire.send(opening)
        self._watch(agent, agent.id, origin._replace(own_session=True), child)

    async def prompt(self, params: PromptParams) -> PromptResult:
        """Queue the prompt's turn and answer when it ends. A prompt that arrives while another
        runs (or settles after a cancel) waits its turn, in arrival order; the next turn starts
        once this prompt is answered, so no frame of it precedes this answer on the wire."""
        entry = self.wire.session(params.session_id)
        read_at = Connection.read_at()
        images = self._takes_images()
        content = [_content_block(i, block, images) for i, block in enumerate(params.prompt)]
        _check_attachments(content, entry.agent)
        auth.require_key(self.ctx.get(LLM).credentials, entry.agent.options.provider, self.auth_methods)
        # Nothing is awaited before the message is queued: arrival order is the order the
        # connection read the requests in, and a `session/cancel` read after it cancels it.
        if self.commands is not None and entry.commands is not None:
            entry.commands.refresh()  # the command files as they are now
            ticket = self.commands.start(entry.agent, content, hold=True)
        else:
            ticket = entry.agent.followup(content, hold=True)
        # Requests run in tasks of their own: a cancel read after this prompt may have run first.
        if entry.cancelled_at > read_at:
            ticket.cancel(CANCELLED_BY_CLIENT)
        entry.prompts[ticket] = read_at
        self.conn.when_answered(ticket.release)
        try:
            reason = await ticket.wait()
        finally:
            del entry.prompts[ticket]
        if reason.kind == "error" and reason.code == MISSING_CREDENTIAL:  # the message names the variable
            raise auth.auth_required(reason.message, self.auth_methods)
        return PromptResult(stop_reason=_stop_reason(reason))

    async def steer(self, params: SteeringParams) -> SteeringResult:
        """`_session/steering`: the message joins the running turn (its next model call sees it
        as the user's, logged with source `steer`), or, when none runs, starts a turn as a prompt
        would (the answer does not wait for it), unless `idleBehavior` is `promptRequired`."""
        entry = self.wire.session(params.session_id)
        images = self._takes_images()
        content = [_content_block(i, block, images) for i, block in enumerate(params.prompt)]
        _check_attachments(content, entry.agent)
        auth.require_key(self.ctx.get(LLM).credentials, entry.agent.options.provider, self.auth_methods)
        if entry.agent.turn_running:
            entry.agent.steer(content)
            return SteeringResult(outcome="injected")
        if params.idle_behavior == "promptRequired":
            return SteeringResult(outcome="promptRequired", reason="noRunningTurn")
        entry.agent.steer(content)
        return SteeringResult(outcome="startedNewTurn")

    async def cancel(self, params: CancelParams) -> None:
        """End the running prompt and those read before this notification (they answer
        `cancelled`); a prompt read after it runs. Read order decides, not the order the request
        tasks happen to run in (`Connection.read_at`): a prompt read earlier whose turn is not
        queued yet is cancelled once it is (`prompt`), one read later but queued already is spared.
        A child session's id cancels only that child's current work: the call that started it
        fails, its parent goes on."""
        entry = self.wire.sessions.get(params.session_id)
        shown = self.wire.wire_of(params.session_id)
        if entry is not None:
            read_at = Connection.read_at()
            entry.cancelled_at = max(entry.cancelled_at, read_at)
            later = [ticket for ticket, at in entry.prompts.items() if at > read_at]
            entry.agent.cancel(CANCELLED_BY_CLIENT, sparing=later)
        elif shown is not None and shown.child is not None and (child := self.ctx.get(AGENTS).get(params.session_id)):
            child.cancel(CANCELLED_BY_CLIENT)
        # else an unknown or idle session: nothing to cancel

    async def close(self) -> None:
        """The client went away: cancel every running turn so its prompt answers."""
        for entry in self.wire.sessions.values():
            entry.agent.cancel("the client closed the connection")

    def _client_prompt(self, system_prompt: SystemPrompt | None) -> tuple[ClientPromptMode, str] | None:
        """The request's `systemPrompt` as (mode, text), checked before anything is opened."""
        if system_prompt is None:
            return None
        allowed = ("append", "override") if self._override_allowed() else ("append",)
        if system_prompt.mode not in allowed:
            raise errors.invalid_params(
                f"systemPrompt.mode {system_prompt.mode!r} is not supported (this agent takes {' and '.join(allowed)})"
            )
        if not system_prompt.content:
            raise errors.invalid_params("systemPrompt.content is empty")
        texts = []
        for index, block in enumerate(system_prompt.content):
            if block.get("type") != "text" or not isinstance(block.get("text"), str):
                raise errors.invalid_params(f"systemPrompt.content[{index}]: only text blocks are supported")
            texts.append(block["text"])
        mode: ClientPromptMode = "override" if system_prompt.mode == "override" else "append"
        return mode, "\n\n".join(texts)

    def _override_allowed(self) -> bool:
        connection = self.ctx.find(CONNECTION) or ConnectionConfig()
        return connection.system_prompt_override

    def _check_workspace(
        self, cwd: str, additional_directories: list[str] | None, mcp_servers: list[dict[str, Any]]
    ) -> _Workspace:
        """The request's roots and MCP servers, once its workspace is known to be usable."""
        if not os.path.isabs(cwd):
            raise errors.invalid_params(f"cwd must be an absolute path, got {cwd!r}")
        try:
            roots = Roots.check(cwd, additional_directories or ())
        except InvalidRoot as exc:
            raise errors.invalid_params(str(exc)) from None
        try:
            servers = parse_servers(mcp_servers)
        except UnsupportedServer as exc:
            raise errors.invalid_params(str(exc)) from None
        if servers and not self.ctx.has(MCP):
            log.warning("this composition has no MCP row; ignoring %d configured server(s)", len(servers))
            return _Workspace(roots, [])
        return _Workspace(roots, servers)


class _Workspace(NamedTuple):
    """What a request opening a session names besides its id: its roots and MCP servers."""

    roots: Roots
    servers: list[ServerSpec]


def _content_block(index: int, block: dict[str, Any], images: bool) -> ContentBlock:
    """`block` as stored content; `images`: the agent says it takes them (`promptCapabilities`)."""
    kind = block.get("type")
    if kind not in PROMPT_BLOCK_TYPES:
        taken = [name for name in PROMPT_BLOCK_TYPES if images or name != "image"]
        raise errors.invalid_params(
            f"prompt[{index}]: content type {kind!r} is not supported"
            f" (this agent takes {', '.join(taken[:-1])} and {taken[-1]})"
        )
    try:
        return CONTENT_BLOCK_ADAPTER.validate_python(block)
    except ValidationError as exc:
        raise errors.invalid_params(f"prompt[{index}]: {_brief(exc)}") from None


def _check_attachments(content: Sequence[ContentBlock], agent: Agent) -> None:
    """Something to say (a prompt of no block, or of blank text only, is refused: it would cost a
    model call, and some providers refuse an empty message); images only for a model that takes
    them (the session's model when the prompt arrives); images and binary files no larger than
    the session log keeps (`maxAttachmentBytes`), and fit to be sent again (`block_problem`)."""
    if is_blank(content):
        raise errors.invalid_params("prompt is empty (no block, or only blank text): there is nothing to send")
    agents = agent.ctx.get(AGENTS)
    for index, block in enumerate(content):
        if isinstance(block, ImageContent) and not model_entry(agents.models, agent.options.model).vision:
            raise errors.invalid_params(f"model {agent.options.model} does not take images")
        attached = block.resource if isinstance(block, EmbeddedResource) else block
        if isinstance(attached, (ImageContent, BlobResourceContents)) and attached.size > agents.max_attachment_bytes:
            raise errors.invalid_params(
                f"prompt[{index}]: the attachment is {attached.size} bytes, more than the"
                f" {agents.max_attachment_bytes} a prompt may attach (maxAttachmentBytes)"
            )
        problem = block_problem(block)
        if problem is not None:
            raise errors.invalid_params(f"prompt[{index}]: {problem}")


def _stop_reason(reason: TurnEndReason) -> StopReason:
    if reason.kind == "error":
        raise JsonRpcError(errors.INTERNAL_ERROR, errors.turn_failed(reason.message))
    return stop_reason(reason)


def _forked_turns(meta: dict[str, Any] | None) -> int | None:
    """`_meta.acpAgent.turns` of a `session/fork`: fork after that many ended turns (None: all)."""
    turns = ((meta or {}).get("acpAgent") or {}).get("turns")
    if turns is None:
        return None
    if type(turns) is not int or turns < 0:
        raise errors.invalid_params(f"_meta.acpAgent.turns must be a whole number of turns, got {turns!r}")
    return turns


def _brief(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, err['loc'])) or 'params'}: {err['msg']}" for err in exc.errors())


def _method(
    name: str, params_model: type[P], handler: Callable[[AcpServer, P], Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    """A jsonrpcserver method: validate the named params, run the handler, dump its result. ACP's
    params are an object: an array's items (which the dispatcher would pass by position) are
    refused by name, not with Python's complaint about positional arguments.

    The guard of every method: an exception the handler did not turn into a JSON-RPC error (a
    bug, a file that broke a parser, a log that could not be written) answers `-32603` naming
    the method and what failed, with its traceback on stderr; the server goes on."""

    async def method(conn: Connection, *positional: Any, **params: Any) -> Any:
        if positional:
            raise errors.invalid_params("ACP params are an object of named fields, not an array")
        try:
            parsed = params_model.model_validate(params)
        except ValidationError as exc:
            raise errors.invalid_params(_brief(exc)) from None
        try:
            result = await handler(conn.state, parsed)
        except JsonRpcError:
            raise
        except Exception as exc:
            log.error("%s failed", name, exc_info=exc)
            raise errors.internal_error(f"{name} failed: {type(exc).__name__}: {exc}") from None
        return Success(result.dump() if hasattr(result, "dump") else result)

    return method


METHODS: Methods = {
    "initialize": _method("initialize", InitializeParams, AcpServer.initialize),
    "authenticate": _method("authenticate", AuthenticateParams, AcpServer.authenticate),
    "logout": _method("logout", LogoutParams, AcpServer.logout),
    "session/new": _method("session/new", NewSessionParams, AcpServer.new_session),
    "session/prompt": _method("session/prompt", PromptParams, AcpServer.prompt),
    "session/cancel": _method("session/cancel", CancelParams, AcpServer.cancel),
    "session/load": _method("session/load", LoadSessionParams, AcpServer.load_session),
    "session/list": _method("session/list", ListSessionsParams, AcpServer.list_sessions),
    "session/resume": _method("session/resume", ResumeSessionParams, AcpServer.resume_session),
    "session/close": _method("session/close", CloseSessionParams, AcpServer.close_session),
    "session/delete": _method("session/delete", DeleteSessionParams, AcpServer.delete_session),
    "session/set_title": _method("session/set_title", SetSessionTitleParams, AcpServer.set_title),
    "_session/steering": _method("_session/steering", SteeringParams, AcpServer.steer),
    "session/fork": _method("session/fork", ForkSessionParams, AcpServer.fork_session),
    "session/set_mode": _method(
        "session/set_mode", SetSessionModeParams, lambda server, params: modes.set_mode(server.wire, params)
    ),
    "session/set_config_option": _method(
        "session/set_config_option",
        SetSessionConfigOptionParams,
        lambda server, params: modes.set_config_option(server.wire, params),
    ),
}


class _Forward:
    """What `AcpServer._watch` subscribes to an agent's log: its events and chunks, to the wire.
    One small object, not two closures: every open session has one (README, Performance)."""

    __slots__ = ("wire", "session_id", "mapper", "shown_on", "child", "top_level", "woken")

    def __init__(
        self,
        wire: Wire,
        session_id: str,
        mapper: UpdateMapper,
        shown_on: AgentWire,
        child: ChildSession | None,
        *,
        top_level: bool,
    ) -> None:
        self.wire = wire
        self.session_id = session_id
        self.mapper = mapper
        self.shown_on = shown_on
        self.child = child
        self.top_level = top_level
        self.woken = False
        """The running turn is one a background child's notice started (no prompt answers it)."""

    def chunk(self, streamed: StreamedChunk) -> None:
        """The hot path: no event made for a chunk's text."""
        mapper = self.mapper
        if mapper.summarizing:  # a compaction's summary, as its event maps
            self.event(AssistantChunkEvent.streamed(streamed))
        elif (shown := mapper.text(streamed.chunk)) is not None:
            self.wire.chunk(self.shown_on, shown)
        elif (card := mapper.answer(streamed)) is not None:  # a child's answer, on its card
            self.wire.update(self.session_id, card)

    def event(self, event: SessionEvent) -> None:
        if self.child is not None:  # its task, when it comes; its usage and end, kept
            self.wire.send(self.child.see(event))
        if isinstance(event, ToolResultEvent) and (started := self.shown_on.children.pop(event.data.call_id, None)):
            self.wire.send(started.end(event.data))  # the child's answer and end, before the call's
        for update in self.mapper.updates(event):
            self.wire.update(self.session_id, update)
        if self.top_level and (woken := woken_turn(event, self.woken)) is not None:
            self.woken = not self.woken
            self.wire.update(self.session_id, woken)
