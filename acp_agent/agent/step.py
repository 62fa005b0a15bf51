"""A step of a turn: its `step/start`, one model call streamed into the log, the results of the tool
calls it asked for, and its `step/end`, however the step stops."""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Literal

from acp_agent.agent.config import model_entry
from acp_agent.agent.keys import AGENTS, PROMPT
from acp_agent.llm.assembler import BlockAssembler, loggable
from acp_agent.llm.errors import LlmError
from acp_agent.llm.request import LlmRequest, Messages
from acp_agent.llm.retry import RetryData, RetryEvent
from acp_agent.llm.service import LLM
from acp_agent.session.content import BlockEnd, FinishReason, ToolCallDelta, Usage
from acp_agent.session.events import (
    AssistantMessageData,
    AssistantMessageEvent,
    CallCost,
    StepData,
    StepEndEvent,
    StepStartEvent,
    ToolResultData,
    ToolResultEvent,
)
from acp_agent.tools.base import ToolResult, bounded_raw_output
from acp_agent.tools.registry import TOOLS

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

EMPTY_ANSWER = "EMPTY_ANSWER"
"""The code of an `llm/retry` logged for a model call that answered nothing."""
EMPTY_ANSWER_ATTEMPTS = 3
"""Calls of one step when the model answers nothing: the first and at most two more (the
adapter's own retries of failed requests come on top)."""

_CALL_CHUNKS = (ToolCallDelta, BlockEnd)


class Step:
    """An open step of `agent`'s turn `turn`: `Step.open` logs its start, `call_model` streams its
    model call, `log_result` answers a tool call, and `end` (every call answered) or `close` (any
    other way it stops) logs its end. `assembler` holds the call as it streamed."""

    __slots__ = ("agent", "assembler", "ended", "message_logged", "number", "turn")

    def __init__(self, agent: Agent, turn: int, number: int) -> None:
        self.agent = agent
        self.turn = turn
        self.number = number
        self.assembler = BlockAssembler()
        self.message_logged = False
        self.ended = False

    @classmethod
    def open(cls, agent: Agent, turn: int, purpose: Literal["compaction"] | None = None) -> Step:
        """Log the turn's next `step/start` (with `purpose`, for a step outside the conversation)."""
        number = agent.session.state.last_step + 1
        agent.session.append(StepStartEvent, StepData(turn=turn, step=number, purpose=purpose))
        return cls(agent, turn, number)

    async def call_model(self, messages: Messages) -> FinishReason:
        """Call the agent's model over `messages`, logging every chunk and then the
        `assistant/message`; why the model stopped (`assembler` holds what it said). A call that
        answers nothing at all is made again, at most `EMPTY_ANSWER_ATTEMPTS` in all. A failed
        finish raises `LlmError` once the message is logged."""
        request = model_request(self.agent, messages)
        attempt = 1
        while True:
            finish = await self._stream(request)
            if attempt == EMPTY_ANSWER_ATTEMPTS or finish.kind not in ("stop", "tool-calls") or self.assembler.blocks():
                break
            # Nothing at all came back (no text, no reasoning, no call): ask again, saying so in the log.
            retry = RetryData(
                provider=request.provider,
                attempt=attempt,
                attempts=EMPTY_ANSWER_ATTEMPTS,
                delay_ms=0,
                code=EMPTY_ANSWER,
                message="the model answered nothing",
            )
            self.agent.session.append(RetryEvent, retry)
            self.assembler = BlockAssembler()
            attempt += 1
        assembler = self.assembler
        message = AssistantMessageData(
            turn=self.turn,
            step=self.number,
            content=assembler.blocks(),
            usage=assembler.usage,
            cost=call_cost(self.agent, assembler.usage),
        )
        self.message_logged = True  # even if its append raises: a subscriber may fail once it is logged
        self.agent.session.append(AssistantMessageEvent, message)
        if finish.kind == "error":
            raise LlmError(finish.message or "the model reported an error", finish.code or "MODEL_ERROR")
        return finish

    async def _stream(self, request: LlmRequest) -> FinishReason:
        """One attempt: every chunk logged and fed to the assembler; its finish."""
        stream = await self.agent.ctx.get(LLM).stream(request)
        append, feed, turn, step = self.agent.session.append_chunk, self.assembler.feed, self.turn, self.number
        async with aclosing(stream):
            async for chunk in stream:
                if isinstance(chunk, _CALL_CHUNKS):  # its id and name must be loggable: see `loggable`
                    chunk = loggable(chunk)
                append(turn, step, chunk)
                feed(chunk)
        finish = self.assembler.finish
        if finish is None:
            raise LlmError("the model stream ended without a finish chunk", "STREAM_CLOSED")
        return finish

    def log_result(self, call_id: str, result: ToolResult) -> None:
        """Log the `tool/result` answering the step's call `call_id`."""
        self.agent.session.append(
            ToolResultEvent,
            ToolResultData(
                turn=self.turn,
                step=self.number,
                call_id=call_id,
                content=result.content,
                is_error=result.is_error,
                error=result.error,
                raw_output=bounded_raw_output(result.raw_output),
            ),
        )

    def end(self) -> None:
        """Log the `step/end` (every call the step made answered)."""
        self.agent.session.append(StepEndEvent, StepData(turn=self.turn, step=self.number))
        self.ended = True

    def close(self, code: str, why: str) -> None:
        """End the step however it stopped, unless it has ended: keep what was streamed (marked
        interrupted), answer owed calls with an error result (`code`, `why`), then `end`."""
        if self.ended:
            return
        session, assembler = self.agent.session, self.assembler
        if assembler.streamed and not self.message_logged:
            self.message_logged = True
            session.append(
                AssistantMessageEvent,
                AssistantMessageData(
                    turn=self.turn,
                    step=self.number,
                    content=assembler.blocks(),
                    usage=assembler.usage,
                    cost=call_cost(self.agent, assembler.usage),
                    interrupted=True,
                ),
            )
        # The log's own account, not the step's: an append that raised may have been logged (a
        # subscriber failed after the store wrote it).
        for call_id in list(session.state.pending_calls):
            self.log_result(call_id, ToolResult.failure(why, code))
        if session.state.open_step is None:  # its step/end is logged already
            self.ended = True
        else:
            self.end()


def call_cost(agent: Agent, usage: Usage | None) -> CallCost | None:
    """What a call of the agent's model that used `usage` cost: at its model entry's prices, else
    at those its adapter row declares (None without usage or prices)."""
    options = agent.options
    pricing = model_entry(agent.ctx.get(AGENTS).models, options.model).pricing or agent.ctx.get(LLM).pricing.get(
        options.provider
    )
    return None if usage is None or pricing is None else pricing.cost(usage)


def model_request(agent: Agent, messages: Messages) -> LlmRequest:
    """A model call of `agent` over `messages`: its system prompt, tools, model and options."""
    options, session = agent.options, agent.session
    tools = [tool.schema() for tool in agent.ctx.get(TOOLS).visible(agent.scope)]
    variables = {"model": options.model, "cwd": session.cwd or ""}
    return LlmRequest(
        provider=options.provider,
        model=options.model,
        system=agent.ctx.get(PROMPT).render(agent.scope, variables, tools),
        messages=messages,
        tools=tools,
        max_tokens=options.max_tokens,
        reasoning_effort=options.reasoning_effort,
        vision=model_entry(agent.ctx.get(AGENTS).models, options.model).vision,
        route=agent.route,
        session_id=session.id,
        # Informative only (`ignorable`): the log still loads in a composition without an adapter.
        on_retry=lambda retry: session.append(RetryEvent, retry, ignorable=True),
    )
