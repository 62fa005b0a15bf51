"""Child agents as child sessions: what a client that advertised `subagents` sees of a child
besides its own updates (which its `UpdateMapper` maps, under its own session id).

- Announce, on the immediate parent's session, before anything of the child goes out: a
  `subagent_update` with the delegating call's description as title, the first 200 characters of
  its task (cut at a word) as description, the cwd, `capabilities: {cancel: {}}` and state
  `running`.
- The task (the child's first message) goes out twice, instead of a `user_message_chunk`: the
  parent's outgoing view (`session_message` on the parent's session naming the child's view) and
  the child's incoming view (on the child's session, naming the parent's).
- While a permission request of the child waits for the user, its state is `requires_action`.
- The end, when the parent's call that started the child has its result: a successful result (the
  text or structured value the parent reads) goes back as a message in the other direction, its
  text streamed as `session_message_chunk`s of the child's outgoing view; then a last
  `subagent_update`: `idle` with the stop reason, the run's token usage and, for a failed run, a
  JSON-RPC error naming the turn's code; `capabilities: null`, since the one-shot child takes no
  more mutations.
- A background child (its call's `run_in_background`) is not ended by its call's result: each of
  its turns ends with its last text as the answer and `idle` (capabilities kept: it takes more
  messages and cancels); a later turn (a message of its parent) goes `running` again, its
  message shown as the task is (`task-<n>` / `answer-<n>` for the n-th turn).

Message ids name the child, so each is unique in its session's transcript: `task:<child>` and
`answer:<child>` on the parent's, `task` and `answer` on the child's. The live connection and the
replay of a loaded session build the same frames here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_agent.acp.content import wire_content
from acp_agent.acp.errors import INTERNAL_ERROR, turn_failed
from acp_agent.acp.schema import (
    Error,
    MessageBlock,
    SessionInfoUpdate,
    SessionMessage,
    SessionMessageChunk,
    SessionUpdate,
    StopReason,
    SubagentCancel,
    SubagentIdle,
    SubagentRequiresAction,
    SubagentRunning,
    SubagentSessionCapabilities,
    SubagentStopReason,
    SubagentUpdate,
    SubagentUsage,
    Text,
)
from acp_agent.acp.updates import META_KEY, UpdateMapper
from acp_agent.session.content import TextBlock, TextContent, Usage
from acp_agent.session.events import (
    STEER_SOURCE,
    AssistantMessageEvent,
    SessionEvent,
    SessionHeader,
    ToolResultData,
    TurnEndEvent,
    TurnEndReason,
    TurnFailed,
    TurnStartEvent,
    UserMessageEvent,
)
from acp_agent.session.titles import brief
from acp_agent.subagents.background import WOKEN_SOURCE
from acp_agent.subagents.driver import STRUCTURED_MISSING, STRUCTURED_MISSING_CODE

DESCRIPTION_LENGTH = 200
"""A child's description is its task's first this many characters, cut at a word."""

STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "max-tokens": "max_tokens",
    "max-steps": "max_turn_requests",
    "aborted": "cancelled",
    "disposed": "cancelled",
    "interrupted": "cancelled",
}
"""How each way a turn ends reads on the wire: a prompt's answer, a child's end state (a failed
turn answers a prompt with an error instead, and ends a child `error`)."""


UNPROMPTED_SOURCES = (WOKEN_SOURCE, STEER_SOURCE)
"""The trigger sources of turns no prompt started: a background child's notice woke the session, or
a steering message came while no turn ran (or after the running turn's last step)."""


def woken_turn(event: SessionEvent, woken: bool) -> SessionInfoUpdate | None:
    """A top-level session's turn that no prompt started (`UNPROMPTED_SOURCES`) shows its start
    (with its trigger) and end as `session_info_update`s whose `_meta.acpAgent.turn` says so (the
    end with the stop reason): no `session/prompt` answers it. `woken`: the running turn is one."""
    match event:
        case TurnStartEvent(data=data) if (trigger := (data.trigger.source or {}).get("kind")) in UNPROMPTED_SOURCES:
            return SessionInfoUpdate(meta={META_KEY: {"turn": "started", "trigger": trigger}})
        case TurnEndEvent(data=data) if woken:
            reason = data.reason
            stop = "error" if reason.kind == "error" else stop_reason(reason)
            return SessionInfoUpdate(meta={META_KEY: {"turn": "ended", "stopReason": stop}})
    return None


def stop_reason(reason: TurnEndReason) -> StopReason:
    """A prompt's stop reason (a failed turn has none: its prompt answers an error)."""
    return STOP_REASONS[reason.kind]


Frame = tuple[str, SessionUpdate]
"""An update and the session it goes out on."""


@dataclass
class Tokens:
    """What a child's model calls used, summed (the kinds no call reported stay None)."""

    input: int = 0
    output: int = 0
    cached: int | None = None
    thought: int | None = None

    def add(self, usage: Usage) -> None:
        self.input += usage.input_tokens
        self.output += usage.output_tokens
        if usage.cache_read_tokens is not None:
            self.cached = (self.cached or 0) + usage.cache_read_tokens
        if usage.reasoning_tokens is not None:
            self.thought = (self.thought or 0) + usage.reasoning_tokens

    def usage(self) -> SubagentUsage:
        """The ACP usage: the total counts the context's tokens as `usage_update` does (input,
        cache reads, output)."""
        return SubagentUsage(
            total_tokens=self.input + (self.cached or 0) + self.output,
            input_tokens=self.input,
            output_tokens=self.output,
            thought_tokens=self.thought,
            cached_read_tokens=self.cached,
        )


@dataclass
class ChildSession:
    """One child shown as a child session: who it is, and what its run has told so far."""

    id: str
    parent_id: str
    """The session id of its immediate parent (a grandchild's parent is a child)."""
    route: str
    cwd: str | None
    task: Any = None
    """The raw input of the call that started it (`description` and `prompt` for `subagent`)."""
    told: bool = False
    """Its task has gone out."""
    reason: TurnEndReason | None = None
    tokens: Tokens = field(default_factory=Tokens)
    ended: bool = False
    turns: int = 0
    said: str | None = None
    """A background child's last text in its running turn (its answer when the turn ends)."""

    @property
    def background(self) -> bool:
        return isinstance(self.task, dict) and self.task.get("run_in_background") is True

    @classmethod
    def opened(
        cls, header: SessionHeader, route: str, parent_id: str, parent: UpdateMapper
    ) -> tuple[ChildSession, list[Frame]]:
        """The child session of `header`'s agent, started by a call that `parent` mapped on
        `parent_id`'s session, and the frames that open it: its announce, then the link on the
        call's card."""
        call_id = header.spawn_call_id or ""
        child = cls(header.id, parent_id, route, header.cwd, parent.raw_input(call_id))
        return child, [child.announce(), (parent_id, parent.link_child(call_id, header.id))]

    def announce(self) -> Frame:
        task = self.task if isinstance(self.task, dict) else {}
        title, prompt = task.get("description"), task.get("prompt")
        update = SubagentUpdate(
            session_id=self.id,
            title=title if isinstance(title, str) and title else None,
            description=brief(prompt, DESCRIPTION_LENGTH) if isinstance(prompt, str) and prompt else None,
            cwd=self.cwd,
            capabilities=SubagentSessionCapabilities(cancel=SubagentCancel()),
            state=SubagentRunning(),
        )
        return self.parent_id, update

    def waiting(self, waits: bool) -> Frame:
        """Its state while a permission request of it waits for the user (`waits`), and after."""
        state = SubagentRequiresAction() if waits else SubagentRunning()
        return self.parent_id, SubagentUpdate(session_id=self.id, state=state)

    def see(self, event: SessionEvent) -> list[Frame]:
        """What one of the child's own events (its fork seed excluded) adds to its frames: the
        task's two views at its first message; the run's usage and end are kept for `end` (a
        background child's turns each end here)."""
        match event:
            case TurnStartEvent() if self.background:
                self.turns, self.said = self.turns + 1, None
                if self.turns > 1:
                    return [(self.parent_id, SubagentUpdate(session_id=self.id, state=SubagentRunning()))]
            case UserMessageEvent() if not self.told:
                self.told = True
                return self._message("task", self.parent_id, self.id, [wire_content(b) for b in event.data.content])
            case UserMessageEvent() if self.background:
                content = [wire_content(b) for b in event.data.content]
                return self._message(f"task-{self.turns}", self.parent_id, self.id, content)
            case AssistantMessageEvent(data=data):
                if data.usage is not None:
                    self.tokens.add(data.usage)
                said = "".join(block.text for block in data.content if isinstance(block, TextBlock))
                self.said = said or self.said
            case TurnEndEvent() if self.background:
                self.reason = event.data.reason
                answer = [self.said] if self.said and self.reason.kind == "completed" else []
                kind = "answer" if self.turns <= 1 else f"answer-{self.turns}"
                return self._final(kind, answer, self.reason, SubagentSessionCapabilities(cancel=SubagentCancel()))
            case TurnEndEvent():
                self.reason = event.data.reason
        return []

    def end(self, result: ToolResultData | None) -> list[Frame]:
        """The answer (a successful `result` of the parent's call) and the final state; nothing
        once sent, nor for a background child (its turns end in `see`). `result` None: the call
        never had one."""
        if self.ended or self.background:
            return []
        self.ended = True
        texts: list[str] = []
        if result is not None and not result.is_error:
            texts = [block.text for block in result.content if isinstance(block, TextContent) and block.text]
        reason = self.reason
        if reason is not None and reason.kind == "completed" and result is not None and result.is_error:
            # A clean turn of a structured run that never recorded its value: the run failed.
            reason = TurnFailed(message=STRUCTURED_MISSING, code=STRUCTURED_MISSING_CODE)
        return self._final("answer", texts, reason, None)

    def _final(
        self,
        kind: str,
        texts: list[str],
        reason: TurnEndReason | None,
        capabilities: SubagentSessionCapabilities | None,
    ) -> list[Frame]:
        """A run's answer (`texts`, as message `kind`), then its `idle` state."""
        content: list[MessageBlock] = [Text(text=text) for text in texts]
        frames = self._message(kind, self.id, self.parent_id, content) if content else []
        stop: SubagentStopReason = "cancelled"  # ended before its turn began
        if reason is not None:
            stop = "error" if reason.kind == "error" else stop_reason(reason)
        error = None
        if isinstance(reason, TurnFailed):
            error = Error(
                code=INTERNAL_ERROR,
                message=turn_failed(reason.message),
                data={"code": reason.code} if reason.code is not None else None,
            )
        state = SubagentIdle(stop_reason=stop, usage=self.tokens.usage(), error=error)
        frames.append((self.parent_id, SubagentUpdate(session_id=self.id, capabilities=capabilities, state=state)))
        return frames

    def _message(self, kind: str, sender: str, recipient: str, content: Sequence[MessageBlock]) -> list[Frame]:
        """A message's two views: the sender's, then the recipient's. The child's outgoing view
        streams its content as chunks; the others carry it whole."""
        on_parent, on_child = f"{kind}:{self.id}", kind
        outgoing, incoming = (on_parent, on_child) if sender == self.parent_id else (on_child, on_parent)
        sent = SessionMessage(
            message_id=outgoing,
            sender_session_id=sender,
            recipient_session_id=recipient,
            recipient_message_id=incoming,
            content=None if sender == self.id else list(content),
        )
        received = SessionMessage(
            message_id=incoming,
            sender_session_id=sender,
            recipient_session_id=recipient,
            sender_message_id=outgoing,
            content=list(content),
        )
        frames: list[Frame] = [(sender, sent)]
        if sender == self.id:
            frames += [(sender, SessionMessageChunk(message_id=outgoing, content=block)) for block in content]
        frames.append((recipient, received))
        return frames
