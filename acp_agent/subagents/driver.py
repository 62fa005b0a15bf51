"""The in-process run driver shared by `spawn` and `fork`: a child agent on the parent's context.

Start contract: validate the depth; create the child through `ctx.get(AGENTS).create` (its setup
window installs persona, tool filter and structured output, before publication); check for
cancellation once more right after publication; queue the prompt. The caller then owns the run:
`result()` waits for the child's turn and reads the child's own output, `dispose()` stops it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final
from weakref import WeakKeyDictionary

import anyio

from acp_agent.agent.factory import Lineage
from acp_agent.agent.keys import AGENTS, PROMPT
from acp_agent.agent.prompt import Section
from acp_agent.kernel.events import EventKey
from acp_agent.session.content import TextBlock, TextContent
from acp_agent.session.events import SessionEvent, TurnEndReason, TurnFailed
from acp_agent.session.routes import call_key, route_under, unspawned_key
from acp_agent.subagents import texts
from acp_agent.subagents.errors import DepthError
from acp_agent.subagents.registry import Capabilities, SubagentRequest, SubagentResult
from acp_agent.subagents.report import ReportTool
from acp_agent.subagents.structured import StructuredCapture, attach_structured_runtime, check_schema
from acp_agent.tools.registry import TOOLS

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket

MAX_SAFE_INTEGER = 2**53 - 1
"""The depth domain: JavaScript's safe integers, so logs stay valid for the TypeScript tools."""

PARENT_CANCELLED = "the parent's turn was cancelled"
INHERIT: Final[EventKey[Callable[[Agent], Callable[[Agent], None] | None]]] = EventKey("subagents/inherit")
"""Policy inheritance (an approval service's session mode, say): each listener is called with
the parent before the child is created, and returns what to install in the child's unpublished
setup window (a callable taking the child: it appends a source-tagged event after any fork seed)
or None. The snapshot is taken before creation, so a later switch in the parent does not reach a
running child, and the child's own later switches win."""
STRUCTURED_MISSING = "the child ended its turn without calling `structured_output`"
STRUCTURED_MISSING_CODE = "structured_output_missing"


def parent_depth(parent: Agent) -> int:
    """The parent's delegation depth as its session header records it (absent: top level, 0)."""
    depth = parent.session.header.delegation_depth
    if depth is None:
        return 0
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= MAX_SAFE_INTEGER:
        raise DepthError(texts.DEPTH_INVALID)
    return depth


def child_depth(parent: Agent, max_depth: int | None) -> int:
    depth = parent_depth(parent) + 1
    if depth > MAX_SAFE_INTEGER:
        raise DepthError(texts.DEPTH_UNSAFE)
    if max_depth is not None and depth > max_depth:
        raise DepthError(texts.depth_exceeded(depth, max_depth))
    return depth


_UNSPAWNED: WeakKeyDictionary[Agent, int] = WeakKeyDictionary()
"""Per parent, how many children no tool call spawned it has created (disposed ones included)."""


def child_route(parent: Agent, spawn_call_id: str | None) -> str:
    """`<parent route>/<call id>`, `#<n>` on the n-th reuse of a call id in the parent's log;
    `<parent route>/#<n>` for the n-th child no tool call spawned (never reused: the replay model
    routes the n-th such log of a parent to `#<n>`, and refuses two logs on one route)."""
    if spawn_call_id is None:
        n = _UNSPAWNED.get(parent, 0) + 1
        _UNSPAWNED[parent] = n
        return route_under(parent.route, unspawned_key(n))
    occurrences = sum(
        1 for event in parent.session.events if event.type == "tool/call" and event.data.call_id == spawn_call_id
    )
    return route_under(parent.route, call_key(spawn_call_id, occurrences))


class InProcessRun:
    """A published child agent running the delegated prompt."""

    def __init__(self, child: Agent, ticket: Ticket, seed_length: int, capture: StructuredCapture | None) -> None:
        self.child = child
        self.ticket = ticket
        """The task's turn (a background child's parent follows it through `background.py`)."""
        self._seed_length = seed_length
        self._capture = capture

    async def result(self) -> SubagentResult:
        """Wait for the child's turn; cancelling the wait cancels the child (it ends `aborted`)."""
        try:
            reason = await self.ticket.wait()
        except anyio.get_cancelled_exc_class():
            self.child.cancel(PARENT_CANCELLED)
            with anyio.CancelScope(shield=True):
                await self.ticket.wait()
            raise
        return read_result(self.child.session.events_from(self._seed_length), reason, self._capture)

    async def dispose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.child.dispose()


def read_result(
    own: Sequence[SessionEvent], reason: TurnEndReason, capture: StructuredCapture | None
) -> SubagentResult:
    """The child's last assistant text (its own events only) and how its turn ended."""
    output = None
    for event in reversed(own):
        if event.type == "assistant/message":
            text = "".join(block.text for block in event.data.content if isinstance(block, TextBlock))
            if text:
                output = text
                break
    if capture is None:
        return SubagentResult(reason=reason, output=output)
    if reason.kind == "completed" and not capture.committed:
        # A clean turn that never recorded the required value settles `error`; no re-prompt.
        reason = TurnFailed(message=STRUCTURED_MISSING, code=STRUCTURED_MISSING_CODE)
    return SubagentResult(reason=reason, output=output, structured=capture.value, captured=capture.committed)


async def start_in_process_run(request: SubagentRequest, seed: Sequence[SessionEvent] | None = None) -> InProcessRun:
    parent = request.parent
    depth = child_depth(parent, request.max_depth)
    if request.output_schema is not None:
        check_schema(request.output_schema)
    capture: StructuredCapture | None = None
    inherited = [listener(parent) for listener in parent.ctx.events.listeners(INHERIT)]

    def setup(child: Agent) -> None:
        nonlocal capture
        scope, ctx = child.scope, child.ctx
        if request.persona is not None:
            ctx.get(PROMPT).add(Section(order=0, name="persona", text=request.persona), owner=scope)
        if request.tool_filter is not None:
            allowed = {*request.tool_filter, texts.STRUCTURED_TOOL, texts.REPORT_TOOL}
            ctx.get(TOOLS).restrict(scope, allowed.__contains__)
        if request.background:
            ctx.get(TOOLS).register(ReportTool(), owner=scope)
        if request.output_schema is not None:
            capture = attach_structured_runtime(child, request.output_schema)
        for install in inherited:
            if install is not None:
                install(child)

    child = await parent.ctx.get(AGENTS).create(
        cwd=parent.session.cwd,
        route=child_route(parent, request.spawn_call_id),
        options=request.agent_options or parent.options,
        seed=seed or (),
        lineage=Lineage(parent_session=parent.id, delegation_depth=depth, spawn_call_id=request.spawn_call_id),
        setup=setup,
    )
    try:
        # The hand-off race: a cancel that landed while the child was being published.
        await anyio.lowlevel.checkpoint()
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await child.dispose()
        raise
    ticket = child.followup([TextContent(text=request.prompt)])
    return InProcessRun(child, ticket, len(seed or ()), capture)


Seed = Callable[["Agent"], Sequence[SessionEvent]]
"""What a child inherits from its parent's log (none for `spawn`, the completed turns for `fork`)."""
ALL = Capabilities(output_schema=True, depth_limit=True, tool_filter=True)


class InProcessProvider:
    """A provider whose children run in this process through `start_in_process_run`, each seeded
    by `seed` (no seed: a fresh child); it honours all three capabilities."""

    capabilities = ALL

    def __init__(self, name: str, seed: Seed | None = None) -> None:
        self.name = name
        self.seed = seed

    async def start(self, request: SubagentRequest) -> InProcessRun:
        seed = self.seed(request.parent) if self.seed is not None else None
        return await start_in_process_run(request, seed=seed)


def describe(result: SubagentResult, structured: bool) -> tuple[bool, str]:
    """What the parent model reads: (is an error, text)."""
    kind = result.reason.kind
    if kind == "completed" and (not structured or result.captured):
        if structured:
            return False, json.dumps(result.structured, ensure_ascii=False)
        return False, result.output or ""
    if kind in ("aborted", "disposed", "interrupted"):
        headline = texts.RUN_CANCELLED
    elif isinstance(result.reason, TurnFailed) and result.reason.code == texts.ACP_CHILD_FAILED:
        headline = texts.run_failed_because(result.reason.message)  # which process failed, and how
    elif kind in ("error", "completed"):  # completed without the required structured value
        headline = texts.RUN_FAILED
    elif kind == "max-tokens":
        headline = texts.RUN_TOKEN_LIMIT
    else:
        headline = texts.run_abnormal(kind)
    return True, headline + (texts.partial_output(result.output) if result.output else "")
