"""How a compaction shows on the wire: a `compaction_update` for a client that shows compactions,
else a "Compact conversation" tool card; `UpdateMapper` holds one per agent."""

from __future__ import annotations

from collections.abc import Sequence

from acp_agent.acp.cards import text_content
from acp_agent.acp.schema import (
    CompactionStatus,
    CompactionSummaryChunk,
    CompactionUpdate,
    ContentChunk,
    SessionUpdate,
    Text,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    UsageUpdate,
)
from acp_agent.compaction import texts as compaction_texts
from acp_agent.session.events import CompactionData, CompactionEvent, SessionEvent, StepData, TurnEndReason


class CompactionView:
    """One agent's compactions: the one under way (from its first step to its event or its turn's
    end), whether its step is streaming the summary, and how many the thread had (from the second
    on, each says it loses detail). `updates`: the client shows compactions."""

    __slots__ = ("_updates", "_id", "summarizing", "_count")

    def __init__(self, *, updates: bool, shown: Sequence[SessionEvent] = ()) -> None:
        self._updates = updates
        self._id: str | None = None
        self.summarizing = False
        """Inside a compaction step: its text is the summary."""
        self._count = sum(isinstance(event, CompactionEvent) for event in shown)

    def started(self, step: StepData) -> SessionUpdate | None:
        """A compaction step opened: the compaction starts, unless it is one retried with less history."""
        self.summarizing = True
        if self._id is not None:
            return None
        compaction_id = self._id = f"compaction-{step.turn}-{step.step}"
        if self._updates:
            return CompactionUpdate(compaction_id=compaction_id, status="in_progress")
        return ToolCallStart(
            tool_call_id=compaction_id, title=compaction_texts.CARD_TITLE, kind="think", status="in_progress"
        )

    def summary_chunk(self, text: str) -> SessionUpdate | None:
        """A chunk of the summary's text, for a client that shows compactions (a card shows it whole)."""
        if self._id is None or not self._updates:
            return None
        return CompactionSummaryChunk(compaction_id=self._id, content=Text(text=text))

    def completed(self, data: CompactionData, usage: UsageUpdate | None) -> tuple[SessionUpdate, ...]:
        """The `compaction` event: its summary, then `usage` (the history's new size), then from
        the second compaction on a line saying each one loses detail."""
        compaction_id = self._id or f"compaction-{data.turn}"
        self._id = None
        self._count += 1
        shown: list[SessionUpdate] = [self._status(compaction_id, "completed", data.summary)]
        if usage is not None:
            shown.append(usage)
        if self._count > 1:
            text = Text(text=compaction_texts.repeated(self._count))
            shown.append(ContentChunk(session_update="agent_message_chunk", content=text))
        return tuple(shown)

    def ended(self, reason: TurnEndReason) -> SessionUpdate | None:
        """A turn ended: a compaction still under way failed, or was cancelled."""
        if self._id is None:
            return None
        compaction_id, self._id = self._id, None
        if reason.kind == "error":
            return self._status(compaction_id, "failed", reason.message)
        return self._status(compaction_id, "cancelled", compaction_texts.CANCELLED)

    def _status(self, compaction_id: str, status: CompactionStatus, text: str) -> SessionUpdate:
        """The compaction's last update: the summary when it completed, else why it did not."""
        if self._updates:
            if status == "completed":
                return CompactionUpdate(compaction_id=compaction_id, status=status, summary=[Text(text=text)])
            return CompactionUpdate(
                compaction_id=compaction_id, status=status, error=text if status == "failed" else None
            )
        card_status: ToolCallStatus = "completed" if status == "completed" else "failed"  # no `cancelled` for a card
        return ToolCallProgress(tool_call_id=compaction_id, status=card_status, content=text_content([text]))
