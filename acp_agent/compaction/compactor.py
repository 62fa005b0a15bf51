"""`ctx.get(COMPACTION)`: summarizing a thread's history when it fills the context window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_agent.agent.step import Step
from acp_agent.compaction import texts
from acp_agent.compaction.history import estimate, history_tokens, plan, without_oldest
from acp_agent.llm.codes import CONTEXT_OVERFLOW, EMPTY_RESPONSE
from acp_agent.llm.errors import LlmError
from acp_agent.llm.request import Messages, UserMessage, derive_messages
from acp_agent.llm.texts import summarization_prompt
from acp_agent.session.content import TextBlock, TextContent
from acp_agent.session.events import CompactionData, CompactionEvent, CompactionTrigger

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent


class Compactor:
    """Compacts an agent's history: automatically before a model call whose estimated input
    passes `compact_at` of the context window, once after the provider answered that the context
    overflowed, and when the user types `/compact`. The same for every agent, children included."""

    def __init__(self, *, compact_at: float, keep_recent_tokens: int) -> None:
        self.compact_at = compact_at
        self.keep_recent_tokens = keep_recent_tokens

    def due(self, agent: Agent) -> bool:
        """Whether the history's estimate passes the threshold."""
        return estimate(agent.session.events) > self.compact_at * agent.options.context_window

    async def before_call(self, agent: Agent) -> None:
        if self.due(agent) and self.possible(agent):
            await self.compact(agent, "threshold")

    def possible(self, agent: Agent) -> bool:
        return plan(agent.session.events, self.keep_recent_tokens) is not None

    async def compact(self, agent: Agent, trigger: CompactionTrigger, focus: str | None = None) -> None:
        """Summarize the history before the open turn in one model call (its own steps, `purpose:
        "compaction"`), then log the `compaction`. A summarization request that overflows is sent
        again without its oldest exchange, until nothing is left to drop. Any failure (or a cancel)
        raises with the log closed and the history unchanged."""
        session = agent.session
        assert session.open_turn is not None, "a compaction happens inside a turn"
        turn = session.open_turn
        found = plan(session.events, self.keep_recent_tokens)
        assert found is not None, "compact only what `possible` said can be"
        history, prompt = found.history, UserMessage(content=[TextContent(text=summarization_prompt(focus))])
        step: Step | None = None
        try:
            while True:
                step = Step.open(agent, turn, "compaction")
                try:
                    await step.call_model(Messages([*history, prompt]))
                    break
                except LlmError as exc:
                    if exc.code != CONTEXT_OVERFLOW:
                        raise
                    history = without_oldest(history)
                    if not history:
                        raise
                    step.close("failed", "the summarization request did not fit")
            step.end()
        except BaseException:
            if step is not None:
                step.close("failed", "the compaction did not finish")
            raise
        summary = "".join(block.text for block in step.assembler.blocks() if isinstance(block, TextBlock)).strip()
        if not summary:
            raise LlmError(texts.NO_SUMMARY, EMPTY_RESPONSE)
        data = CompactionData(turn=turn, summary=summary, cut_seq=found.cut_seq, tokens=0, trigger=trigger)
        # The history the model sees from here on, as the next call will send it.
        after = derive_messages([*session.events, CompactionEvent(seq=session.state.next_seq, time=0, data=data)])
        session.append(CompactionEvent, data.model_copy(update={"tokens": history_tokens(after)}))
