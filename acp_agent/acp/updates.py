"""From session-log events to `session/update` payloads: what the editor sees of a turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

from acp_agent.acp.cards import text_content, tool_card, wire_diffs, wire_locations
from acp_agent.acp.compaction_view import CompactionView
from acp_agent.acp.connection import encode_text
from acp_agent.acp.foreign import foreign_update
from acp_agent.acp.notices import NoticeQueue, told
from acp_agent.acp.schema import (
    ContentChunk,
    Cost,
    ImageBlock,
    Plan,
    PlanEntry,
    PlanItems,
    PlanRemoved,
    PlanUpdate,
    SessionInfoUpdate,
    SessionUpdate,
    Text,
    ToolCallContent,
    ToolCallContentItem,
    ToolCallProgress,
    ToolCallTerminal,
    UsageUpdate,
)
from acp_agent.commands.events import CommandReplyEvent
from acp_agent.kernel.tables import take
from acp_agent.mcp.events import StatusEvent
from acp_agent.session.content import (
    BlockEnd,
    BlockStart,
    ReasoningBlock,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextContent,
    TextDelta,
    Usage,
)
from acp_agent.session.events import (
    USER_SOURCES,
    AssistantChunkData,
    AssistantChunkEvent,
    AssistantMessageEvent,
    CallCost,
    CompactionData,
    CompactionEvent,
    SessionEvent,
    StepEndEvent,
    StepStartEvent,
    StreamedChunk,
    ToolCallData,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    TurnEndEvent,
    UserMessageData,
    UserMessageEvent,
)
from acp_agent.session.titles import TitleEvent, session_title
from acp_agent.subagents.acp import AcpUpdateEvent
from acp_agent.tools.base import Image, Tool, ToolDisplayData, ToolDisplayEvent, ToolResult
from acp_agent.tools.todo import TodoUpdateData, TodoUpdateEvent

ToolLookup = Callable[[str], "Tool[Any] | None"]
CHILD_SHOWS: frozenset[type[SessionEvent]] = frozenset(
    {ToolCallEvent, ToolDisplayEvent, ToolResultEvent, AcpUpdateEvent}
)
"""What a child agent shows on its top-level session when the client does not take child
sessions: its tool calls (opened, shown while they run, finished), and its answer as it grows on
the card of the call that started it (an ACP child: its tool calls, as `acp/update` events). Its
thoughts, usage, title and plan stay in its own log."""


class ChildOrigin(NamedTuple):
    """Where a child agent's activity shows. As a child session (`own_session`: the client
    advertised `subagents`): everything under its own session id, `_meta` naming its route. Else
    on its top-level session: its tool calls, with ids prefixed by its route (unique in the
    session) and `_meta` naming the parent's call, under `acpAgent` and under the key Zed reads to
    nest a subagent's activity under that call (`claudeCode.parentToolUseId`)."""

    route: str
    parent_tool_call_id: str
    """The wire id of the call that started the child, on its immediate parent's session."""
    own_session: bool = False

    def wire_id(self, call_id: str) -> str:
        return call_id if self.own_session else f"{self.route}/{call_id}"

    def meta(self) -> dict[str, Any]:
        if self.own_session:
            return {META_KEY: {"route": self.route}}
        return {**self.answer_meta(), NEST_KEY: {"parentToolUseId": self.parent_tool_call_id}}

    def answer_meta(self) -> dict[str, Any]:
        """The `_meta` of an update of the parent's card showing the child's answer (the card is
        the parent's: not nested under itself)."""
        return {META_KEY: {"route": self.route, "parentToolCallId": self.parent_tool_call_id}}


PLAN_ID = "todos"
"""The id of a session's one plan (its todo list), for a client that takes plan operations."""
META_KEY = "acpAgent"
NEST_KEY = "claudeCode"

ShownText = tuple[Literal["agent_message_chunk", "agent_thought_chunk"], str]
"""A streamed chunk as the editor shows it: which kind of chunk, and its text."""


class UpdateFrames:
    """The `session/update` frames of one session's streamed chunks, built directly from their
    text (no models, no dump: one per delta): the bytes `Connection.notify` writes for the same
    update."""

    __slots__ = ("_head",)

    def __init__(self, session_id: str) -> None:
        # The session's part of the head only: every open session holds one (README, Performance).
        self._head = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":' + encode_text(session_id)

    def text(self, shown: ShownText) -> bytes:
        kind, text = shown
        return self._head + _TEXT_UPDATES[kind] + encode_text(text) + b"}}}}\n"


_TEXT_UPDATES = {
    kind: b',"update":{"sessionUpdate":"' + kind.encode() + b'","content":{"type":"text","text":'
    for kind in ("agent_message_chunk", "agent_thought_chunk")
}


class UpdateMapper:
    """Maps one agent's events; remembers each call's tool so its result renders the same way.

    A child (`origin` given) shown as a child session shows all but a title (its parent's
    `subagent_update` names it). A child shown on its top-level session shows its tool calls, and
    its answer on the card of the parent's call that started it: the text of its latest model call
    so far replaces the card's content after the task at each text block's end and, with
    `answer_every_ms`, while a block streams once that many ms of the child's clock (its events'
    `time`) have passed since the card last changed.

    The diffs and the terminal a running call shows (`tool/display`) stay in its content after its
    result; a call shown in a terminal drops the rendering of a result that
    is its command's output (the terminal shows it), keeping only an error's (a timeout, a failure).

    `context_window` (tokens): with it, each model call's usage becomes a `usage_update`. `live`:
    false for a replay (`session/load`), where terminals are left out (the client released them,
    perhaps in another process) and the result's text shows instead. `shown`: the events the
    client has already seen (a loaded session's), so the title is not sent again.

    An MCP server that could not start (`mcp/status` failed) is a `notice` when the client shows
    notices (`notices`), else an `agent_message_chunk` (a paragraph of its own) that begins a
    model call's step: at once when the step is open and has not streamed yet (the first prompt's
    call waits for servers still starting, so a failure at start-up begins the first answer), else
    at the next step; neither is replayed (the notice is live news; the message was never the
    model's).

    A compaction (its steps, then the `compaction` event, or the end of its turn) is a
    `compaction_update` (`in_progress`; `completed` with the summary, `failed` or `cancelled`) with
    the summary streaming in `compaction_summary_chunk`s when the client shows compactions
    (`compaction`), else a "Compact conversation" tool card (kind `think`) whose content is the
    summary; then a `usage_update` with the history's new size, and from the second compaction of
    a thread on a one-line agent message saying each one loses detail (`updates`). The
    summarization call's text is never an agent message, nor its usage the context's.
    """

    def __init__(
        self,
        lookup: ToolLookup,
        origin: ChildOrigin | None = None,
        *,
        context_window: int | None = None,
        live: bool = True,
        shown: Sequence[SessionEvent] = (),
        notices: bool = False,
        compaction: bool = False,
        plans: bool = False,
        answer_every_ms: int | None = None,
    ) -> None:
        self._lookup = lookup
        self._origin = origin
        self._context_window = context_window
        self._live = live
        self._titled = any(_from_user(event) or isinstance(event, TitleEvent) for event in shown)
        self._notices = NoticeQueue(notices=notices, live=live)
        self._tools: dict[str, Tool[Any] | None] = {}
        self._shown: dict[str, list[ToolCallContentItem]] = {}
        """Per call: the diffs (and, live, the terminals) it showed so far."""
        self._streamed: set[int] = set()
        """The blocks of the current model call that streamed text (by index)."""
        self._plans = plans
        self._compaction = CompactionView(updates=compaction, shown=shown)
        self._costs = _Costs()
        """The session's cost so far, the calls the client saw included (a loaded session's)."""
        for event in shown:
            if isinstance(event, AssistantMessageEvent):
                self._costs.add(event.data.cost)
        self._inputs: dict[str, Any] = {}
        """Each running call's raw input, by call id (a delegating call's task), until its result."""
        self._children: dict[str, str] = {}
        """The child session each running call started, by call id."""
        self._answer = _AnswerCard(origin, answer_every_ms) if origin is not None and not origin.own_session else None

    def wire_id(self, call_id: str) -> str:
        return self._origin.wire_id(call_id) if self._origin is not None else call_id

    def meta(self, extra: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The `_meta` of this agent's frames: a child's names its route (and the parent's call);
        `extra` entries (a tool's, such as its MCP server) join them under `acpAgent`."""
        meta = self._origin.meta() if self._origin is not None else None
        if not extra:
            return meta
        return {**(meta or {}), META_KEY: {**(meta or {}).get(META_KEY, {}), **extra}}

    def raw_input(self, call_id: str) -> Any:
        """The raw input of the running call of that id (None once its result was mapped, or for
        a call this mapper did not see)."""
        return self._inputs.get(call_id)

    def link_child(self, call_id: str, child_id: str) -> SessionUpdate:
        """The update that links a call's card to the child session it started; the card's final
        update names the child too (`_meta.acpAgent.childSessionId`)."""
        self._children[call_id] = child_id
        return ToolCallProgress(tool_call_id=self.wire_id(call_id), meta=self.meta({"childSessionId": child_id}))

    def map(self, event: SessionEvent) -> SessionUpdate | None:
        """The update `event` shows, if any: one method per event type."""
        if self._answer is not None and type(event) not in CHILD_SHOWS:
            return self._answer.see(event)
        match event:
            case AssistantChunkEvent() if self._compaction.summarizing:
                return self._summary_chunk(event)
            case AssistantChunkEvent():
                shown = self.text(event.data.chunk)
                return None if shown is None else ContentChunk(session_update=shown[0], content=Text(text=shown[1]))
            case AssistantMessageEvent():
                self._streamed.clear()  # the call is over; the next one numbers its blocks anew
                self._notices.step_answered()
                self._costs.add(event.data.cost)
                return None if self._compaction.summarizing else self._usage(event.data.usage)
            case StepStartEvent() if event.data.purpose == "compaction":
                return self._compaction.started(event.data)
            case StepEndEvent():
                self._compaction.summarizing = False
                self._notices.step_answered()
            case TurnEndEvent():
                return self._compaction.ended(event.data.reason)
            case UserMessageEvent() if self._origin is None:
                return self._title(event.data)
            case TitleEvent() if self._origin is None:
                self._titled = True  # a first prompt after it does not rename the session
                return SessionInfoUpdate(title=event.data.title)
            case ToolCallEvent():
                return self._call(event.data)
            case ToolDisplayEvent():
                return self._display(event.data)
            case ToolResultEvent():
                return self._result(event.data)
            case CommandReplyEvent() if event.data.notice is not None:  # a hook's message
                return told(event.data.text, notices=self._notices.notices, severity=event.data.notice)
            case CommandReplyEvent():  # a command's answer, without the model
                return ContentChunk(session_update="agent_message_chunk", content=Text(text=event.data.text))
            case StatusEvent():
                return self._notices.server_failed(event.data)
            case StepStartEvent():
                return self._notices.step_started()
            case AcpUpdateEvent():  # what an ACP agent run as a child reported (`foreign.py`)
                return foreign_update(event.data.update, self.wire_id, self.meta(), text=self._answer is None)
            case TodoUpdateEvent():
                return self._plan(event.data)
        return None

    @property
    def summarizing(self) -> bool:
        """Inside a compaction's step: a chunk is the summary's (`map` shows it), never the
        agent's text (`text`)."""
        return self._compaction.summarizing

    def updates(self, event: SessionEvent) -> tuple[SessionUpdate, ...]:
        """Every update `event` shows, in order: `map`'s, or for a `compaction` its own three."""
        if isinstance(event, CompactionEvent):
            return () if self._answer is not None else self._compacted(event.data)
        update = self.map(event)
        return () if update is None else (update,)

    def _summary_chunk(self, event: AssistantChunkEvent) -> SessionUpdate | None:
        shown = self.text(event.data.chunk)  # the summary's text, however it streamed; thoughts are not shown
        if shown is None or shown[0] != "agent_message_chunk":
            return None
        return self._compaction.summary_chunk(shown[1])

    def _compacted(self, data: CompactionData) -> tuple[SessionUpdate, ...]:
        usage = None
        if self._context_window is not None:
            usage = UsageUpdate(used=data.tokens, size=self._context_window, cost=self._costs.total())
        return self._compaction.completed(data, usage)

    def text(self, chunk: StreamChunk) -> ShownText | None:
        """What a chunk shows: the kind of chunk and its text, or None. The hot path, one call
        per streamed chunk: the live wire builds the frame from it directly (`UpdateFrames`). A
        child shown on its top-level session shows none (see `answer`)."""
        if self._answer is not None:
            return None
        match chunk:
            case TextDelta():
                self._streamed.add(chunk.index)
                return "agent_message_chunk", chunk.text
            case ReasoningDelta():
                self._streamed.add(chunk.index)
                return "agent_thought_chunk", chunk.text
            case BlockStart():
                self._streamed.discard(chunk.index)
            case BlockEnd(block=TextBlock(text=text)) if text and chunk.index not in self._streamed:
                # Its text came only whole, with its end (some recordings have no deltas; the
                # model sees it in the history): one chunk, or the client would never see it.
                return "agent_message_chunk", text
            case BlockEnd(block=ReasoningBlock(text=text)) if text and chunk.index not in self._streamed:
                return "agent_thought_chunk", text
        return None

    def answer(self, streamed: StreamedChunk) -> SessionUpdate | None:
        """For a child shown on its top-level session: the update of its delegating card that a
        chunk of its answer brings, if any (None, and no event made, for any other agent)."""
        return self._answer.see(AssistantChunkEvent.streamed(streamed)) if self._answer is not None else None

    def _usage(self, usage: Usage | None) -> SessionUpdate | None:
        if usage is None or self._context_window is None:
            return None
        return UsageUpdate(used=usage.context, size=self._context_window, cost=self._costs.total())

    def _plan(self, plan: TodoUpdateData) -> SessionUpdate:
        """The whole `plan`; for a client that takes plan operations, the session's one plan
        updated, or removed when the todo list was cleared."""
        entries = [PlanEntry(content=t.content, priority=t.priority, status=t.status) for t in plan.todos]
        if not self._plans:
            return Plan(entries=entries)
        if not entries:
            return PlanRemoved(plan_id=PLAN_ID)
        return PlanUpdate(plan=PlanItems(plan_id=PLAN_ID, entries=entries))

    def _title(self, message: UserMessageData) -> SessionUpdate | None:
        if message.source.kind not in USER_SOURCES or self._titled:
            return None
        self._titled = True  # the first prompt names the session, even when it has no title
        title = session_title(message.content)
        return SessionInfoUpdate(title=title) if title is not None else None

    def _call(self, call: ToolCallData) -> SessionUpdate:
        tool = self._tools[call.call_id] = self._lookup(call.name)
        card = tool_card(tool, call.name, call.arguments)
        self._inputs[call.call_id] = card.raw_input
        return card.start(self.wire_id(call.call_id), self.meta(card.meta))

    def _display(self, display: ToolDisplayData) -> SessionUpdate | None:
        # ACP replaces a call's content and locations with each update: send all shown so far.
        shown = self._shown.setdefault(display.call_id, [])
        added: list[ToolCallContentItem] = [
            *wire_diffs(display.diffs or []),
            *text_content(display.notes or []),
            *_images(display.images or []),
        ]
        if display.terminal_id is not None and self._live:
            added.append(ToolCallTerminal(terminal_id=display.terminal_id))
        shown += added
        locations = wire_locations(display.locations or [])
        if not added and locations is None:
            return None  # a raw output (it goes with the result), or a replayed terminal
        return ToolCallProgress(
            tool_call_id=self.wire_id(display.call_id),
            content=list(shown) if added else None,
            locations=locations,
            meta=self.meta(),
        )

    def _result(self, data: ToolResultData) -> SessionUpdate:
        tool = take(self._tools, data.call_id)
        shown = take(self._shown, data.call_id, [])
        take(self._inputs, data.call_id)  # read only while the call runs (its child's task)
        child = take(self._children, data.call_id)
        result = ToolResult(content=data.content, is_error=data.is_error, error=data.error)
        paragraphs = tool.render_result(result) if tool is not None and not result.is_error else [result.plain_text()]
        if result.error is None and any(isinstance(item, ToolCallTerminal) for item in shown):
            paragraphs = []  # the output is in the terminal
        return ToolCallProgress(
            tool_call_id=self.wire_id(data.call_id),
            status="failed" if data.is_error else "completed",
            content=text_content(paragraphs) + shown,
            # A result's own raw output (an MCP server's), else one its call showed (an editor terminal).
            raw_output=data.raw_output,
            meta=self.meta({"childSessionId": child} if child else None),
        )


def _images(images: list[Image]) -> list[ToolCallContentItem]:
    return [ToolCallContent(content=ImageBlock(data=image.data, mime_type=image.mime_type)) for image in images]


class _Costs:
    """The logged costs of a session's model calls, summed per currency."""

    __slots__ = ("sums", "currency")

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.currency: str | None = None
        """The latest call's: the one the total is told in."""

    def add(self, cost: CallCost | None) -> None:
        if cost is not None:
            self.sums[cost.currency] = self.sums.get(cost.currency, 0.0) + cost.amount
            self.currency = cost.currency

    def total(self) -> Cost | None:
        if self.currency is None:
            return None
        return Cost(amount=round(self.sums[self.currency], 10), currency=self.currency)


def _from_user(event: SessionEvent) -> bool:
    """Whether an event is a message the user wrote (a prompt or a steer)."""
    return isinstance(event, UserMessageEvent) and event.data.source.kind in USER_SOURCES


class _AnswerCard:
    """A child's answer so far, for the card of the parent's call that started it (see
    `UpdateMapper`): the task (the child's first message) and the text of its latest model call."""

    def __init__(self, origin: ChildOrigin, every_ms: int | None) -> None:
        self._origin = origin
        self._every_ms = every_ms
        self._task: str | None = None
        self._text: list[str] = []
        self._streamed: set[int] = set()
        self._fresh = False
        """The latest model call has ended: the next text starts a new answer."""
        self._shown: str | None = None
        self._shown_at = 0
        self._summarizing = False

    def see(self, event: SessionEvent) -> SessionUpdate | None:
        if isinstance(event, StepStartEvent):  # a compaction's summary is not the child's answer
            self._summarizing = event.data.purpose == "compaction"
        if self._summarizing:
            return None
        match event:
            case UserMessageEvent() if self._task is None:
                self._task = "".join(b.text for b in event.data.content if isinstance(b, TextContent))
            case AssistantMessageEvent():
                self._fresh, self._streamed = True, set()
            case AssistantChunkEvent(data=AssistantChunkData(chunk=TextDelta() as delta)):
                self._add(delta.text)
                self._streamed.add(delta.index)
                due = self._every_ms is not None and event.time - self._shown_at >= self._every_ms
                return self._update(event.time) if due else None
            case AssistantChunkEvent(data=AssistantChunkData(chunk=BlockEnd(block=TextBlock() as block) as end)):
                if end.index not in self._streamed:  # its text came only whole, with its end
                    self._add(block.text)
                return self._update(event.time)
        return None

    def _add(self, text: str) -> None:
        if self._fresh:
            self._text, self._fresh = [], False
        self._text.append(text)

    def _update(self, now: int) -> SessionUpdate | None:
        answer = "".join(self._text)
        if not answer or answer == self._shown:
            return None
        self._shown, self._shown_at = answer, now
        return ToolCallProgress(
            tool_call_id=self._origin.parent_tool_call_id,
            content=text_content([self._task, answer] if self._task else [answer]),
            meta=self._origin.answer_meta(),
        )
