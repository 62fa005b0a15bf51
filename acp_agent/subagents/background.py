"""Background children: children that keep running after the call that started them answered,
that the parent can message, list and stop, and that tell the parent when they settle.

A background child is an ordinary published child agent (`InProcessRun.child`); this module
follows its log. Each of its turns ends with a *notice* to its parent: a `subagent/notice` event
in the parent's log that the model reads as a user message (the one-shot result's texts). A
notice is logged right before the parent's next model call (`tools.base.BEFORE_MODEL_CALL`), so
it never lands inside a streamed call; a parent that is idle, or whose turn ends with a notice
still pending and nothing queued, gets a new turn for it. A child the parent stopped (or
cancelled with everything else) does not wake it: its notice waits for the next model call.

Children outlive the parent's turns, not the parent: the parent's cancel-all cancels them, its
disposal (session close, server exit) disposes them first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal
from weakref import WeakKeyDictionary

import anyio

from acp_agent.agent.agent import Ticket
from acp_agent.agent.calling import as_agent
from acp_agent.kernel.context import Context
from acp_agent.kernel.models import Model
from acp_agent.llm.holds import NOTICES_DUE
from acp_agent.session.content import ContentBlock, TextBlock, TextContent, ToolCallBlock
from acp_agent.session.events import (
    AssistantMessageEvent,
    SessionEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from acp_agent.session.titles import brief
from acp_agent.subagents import texts
from acp_agent.subagents.driver import describe, read_result
from acp_agent.tools.base import CallingAgent

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

NOTICE_EVENT: Final = "subagent/notice"
WOKEN_SOURCE = "subagent"
"""The source of a parent turn that a notice started (it has no user message)."""
DEFAULT_LIMIT = 8
ACTIVITY_LENGTH = 80

State = Literal["running", "completed", "error", "max-tokens", "max-steps", "aborted", "disposed", "interrupted"]
"""A background child's state: `running` while a turn of it runs or waits, else how its last turn ended."""


class NoticeData(Model):
    agent_id: str
    """The child's session id (the name the parent model uses for it)."""
    route: str
    """The child's route (what the replay and the snapshots name it by)."""
    kind: Literal["settled", "report"]
    turn: int
    """The child's turn the notice is about."""
    text: str
    """What the parent model reads."""
    is_error: bool = False


class NoticeEvent(SessionEvent):
    """`subagent/notice` (turn-enclosed): logged in the parent's step right before the model call
    that reads it."""

    type: Literal["subagent/notice"] = NOTICE_EVENT
    data: NoticeData

    def model_content(self) -> list[ContentBlock]:
        return [TextContent(text=self.data.text)]


class NoticeBox:
    """The notices on their way to one parent: those not logged yet, and how many ever came."""

    def __init__(self) -> None:
        self.pending: list[NoticeData] = []
        self.received = 0
        self._arrived: anyio.Event | None = None

    def put(self, notice: NoticeData) -> None:
        self.pending.append(notice)
        self.received += 1
        if self._arrived is not None:
            self._arrived.set()
            self._arrived = None

    async def until(self, count: int) -> None:
        """Return once `count` notices have come in all."""
        while self.received < count:
            self._arrived = self._arrived or anyio.Event()
            await self._arrived.wait()


@dataclass(eq=False)
class BackgroundChild:
    """One background child as its parent knows it."""

    agent: Agent
    parent: Agent
    description: str
    tickets: list[Ticket]
    """Its messages not yet claimed by a turn, in order (the first: the task)."""
    state: State = "running"
    activity: str = texts.NO_ACTIVITY
    current: Ticket | None = None
    turn_start: int = 0
    """The seq of its running turn's `turn/start`: its result is read from there."""
    quiet: bool = False
    """Its next notice does not wake the parent (the parent stopped or cancelled it)."""
    awaited: set[Ticket] = field(default_factory=set)
    """Messages whose answer the parent's call waits for: their turns send no notice."""
    result: tuple[bool, str] = (False, "")
    """Its last turn's result as the parent reads it: (is an error, text)."""

    @property
    def id(self) -> str:
        return self.agent.id

    def see(self, event: SessionEvent) -> NoticeData | None:
        """Follow one event of the child's log; the notice its turn's end sends, if any."""
        match event:
            case TurnStartEvent():
                self.state, self.turn_start = "running", event.seq
                self.current = self.tickets.pop(0) if self.tickets else None
            case AssistantMessageEvent(data=data):
                for block in data.content:
                    if isinstance(block, TextBlock) and block.text:
                        self.activity = texts.activity_said(brief(block.text, ACTIVITY_LENGTH))
                    elif isinstance(block, ToolCallBlock):
                        self.activity = texts.activity_called(block.name)
            case TurnEndEvent(data=data):
                reason = data.reason
                self.state = reason.kind
                self.result = describe(
                    read_result(self.agent.session.events_from(self.turn_start), reason, None), False
                )
                if self.current is not None and self.current in self.awaited:
                    return None
                is_error, text = self.result
                return self.notice(
                    "settled", data.turn, texts.notice_settled(self.id, self.description, text, is_error), is_error
                )
        return None

    def notice(self, kind: Literal["settled", "report"], turn: int, text: str, is_error: bool = False) -> NoticeData:
        return NoticeData(agent_id=self.id, route=self.agent.route, kind=kind, turn=turn, text=text, is_error=is_error)


class Background:
    """`ctx.get(BACKGROUND)`: every parent's background children and the notices coming to it."""

    def __init__(self, ctx: Context, limit: int = DEFAULT_LIMIT) -> None:
        self.ctx = ctx
        self.limit = limit
        self._children: WeakKeyDictionary[Agent, dict[str, BackgroundChild]] = WeakKeyDictionary()
        self._of_child: WeakKeyDictionary[Agent, BackgroundChild] = WeakKeyDictionary()
        self._boxes: WeakKeyDictionary[Agent, NoticeBox] = WeakKeyDictionary()
        self._starting: WeakKeyDictionary[Agent, int] = WeakKeyDictionary()
        """Per parent, the children being started in the background (see `reserve`)."""

    def children(self, parent: Agent) -> list[BackgroundChild]:
        return list(self._children.get(parent, {}).values())

    def find(self, parent: Agent, agent_id: str) -> BackgroundChild | None:
        return self._children.get(parent, {}).get(agent_id)

    def reserve(self, parent: Agent) -> bool:
        """Hold one of the parent's `limit` places for a child being started (False: all taken);
        `adopt` takes it over, `release` gives it back when the start failed. Calls of one step
        start at once, so a place is held from before the start's first await."""
        running = sum(1 for child in self.children(parent) if child.state == "running")
        if running + self._starting.get(parent, 0) >= self.limit:
            return False
        self._starting[parent] = self._starting.get(parent, 0) + 1
        return True

    def release(self, parent: Agent) -> None:
        self._starting[parent] -= 1

    def box(self, parent: Agent) -> NoticeBox:
        box = self._boxes.get(parent)
        if box is None:
            box = self._boxes[parent] = NoticeBox()
            parent.scope.add(parent.session.subscribe(lambda event: self._parent_event(parent, event), chunks=False))
        return box

    def adopt(self, parent: Agent, child: Agent, task: Ticket, description: str) -> BackgroundChild:
        """Follow `child`, just started with `task`, as a background child of `parent` (in the place
        `reserve` held)."""
        self.release(parent)
        entry = BackgroundChild(child, parent, description, [task])
        self._children.setdefault(parent, {})[child.id] = entry
        self._of_child[child] = entry
        self.box(parent)
        child.scope.add(child.session.subscribe(lambda event: self._child_event(entry, event), chunks=False))
        return entry

    def message(self, entry: BackgroundChild, content: Sequence[ContentBlock]) -> Ticket:
        """Queue a turn of the child for `content` (it starts at once when the child is idle)."""
        ticket = entry.agent.followup(content)
        entry.tickets.append(ticket)
        entry.state = "running"
        return ticket

    def report(self, child: Agent, message: str) -> None:
        """An interim message of a background child (the only agents with `report`) for its parent."""
        entry = self._of_child[child]
        text = texts.notice_report(entry.id, entry.description, message)
        self._send(entry, entry.notice("report", child.session.state.open_turn or 0, text), wake=True)

    async def stop(self, entry: BackgroundChild, reason: str) -> None:
        """Cancel the child's work (its notice does not wake the parent) and wait until it has stopped."""
        entry.quiet = True
        entry.agent.cancel(reason)
        await entry.agent.when_idle()

    def _child_event(self, entry: BackgroundChild, event: SessionEvent) -> None:
        notice = entry.see(event)
        if notice is not None:
            wake = not entry.quiet
            entry.quiet = False
            self._send(entry, notice, wake)

    def _send(self, entry: BackgroundChild, notice: NoticeData, wake: bool) -> None:
        parent = entry.parent
        self.box(parent).put(notice)
        # A running turn reads it at its next model call, or wakes the next turn as it ends.
        if wake and not parent.in_turn and not parent.queued:
            parent.followup([], WOKEN_SOURCE)

    def _parent_event(self, parent: Agent, event: SessionEvent) -> None:
        """A parent turn that ends with a notice still pending, and nothing queued, starts the next."""
        box = self._boxes.get(parent)
        if isinstance(event, TurnEndEvent) and box is not None and box.pending and not parent.queued:
            parent.followup([], WOKEN_SOURCE)

    async def before_model_call(self, caller: CallingAgent) -> None:
        """Log the notices pending for the agent about to call its model (BEFORE_MODEL_CALL
        listener)."""
        agent = as_agent(caller)
        if self.ctx.events.listeners(NOTICES_DUE):
            await self.ctx.events.serial(NOTICES_DUE, agent, self.box(agent))
        box = self._boxes.get(agent)
        if box is not None and box.pending:
            pending, box.pending = box.pending, []
            for notice in pending:
                agent.session.append(NoticeEvent, notice)

    def cancelling(self, agent: Agent, reason: str | None) -> None:
        """The parent's cancel-all (CANCELLING listener): its running children are cancelled, quietly."""
        for entry in self.children(agent):
            if entry.state == "running":
                entry.quiet = True
                entry.agent.cancel(texts.PARENT_CANCELLED_ALL)

    async def disposing(self, agent: Agent) -> None:
        """The parent is being disposed (DISPOSING listener): its children are disposed first."""
        children = self._children.pop(agent, {})
        for entry in children.values():
            entry.quiet = True
            await entry.agent.dispose()
        self._boxes.pop(agent, None)
