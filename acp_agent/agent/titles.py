"""Titles written by the model: after a top-level session's first completed turn, one short model
call (the session's model, no tools, a bounded prompt) names the session, unless it has a title
already (the user's, which is never replaced, or an earlier one of the model's).

Loader plugin (`acp_agent.agent.titles`): a composition without this row makes no such call (the
replay and scripted compositions leave it out: a recorded stream has no title call to play).
"""

from __future__ import annotations

import logging
from contextlib import aclosing
from typing import TYPE_CHECKING
from weakref import WeakSet

from acp_agent.agent.loop import TURN_ENDED
from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.llm.errors import LlmError
from acp_agent.llm.request import LlmRequest, UserMessage
from acp_agent.llm.service import LLM
from acp_agent.session.content import AssistantBlock, Finish, TextBlock, TextContent, TextDelta
from acp_agent.session.events import USER_SOURCES, AssistantMessageEvent, TurnEndReason, UserMessageEvent
from acp_agent.session.titles import TitleData, TitleEvent, brief, one_line

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

log = logging.getLogger(__name__)

TITLE_SYSTEM = (
    "You name conversation threads. Answer with a short title for the conversation you are shown:"
    " at most eight words, plain text on one line, no quotes, no final period."
)
"""The title call's system prompt (model-visible)."""
EXCERPT_CHARS = 2000
"""How much of the user's first message and of the agent's last answer the title call sees."""
ROUTE_SUFFIX = "#title"
"""The title call's route is the agent's with this suffix: a model keyed by route (the scripted
one) tells it from the agent's own calls."""

name = "titles"
inject = ("llm", "agents")


ENV_TITLES = "ACP_AGENT_MODEL_TITLES"
"""`false` turns the title call off (the packaged row's `enabled`; the test suite sets it)."""


class Config(PluginConfig):
    enabled: bool = True
    max_tokens: int = 1024
    """The title call's output limit (a thinking model spends some of it before the title)."""


class Titler:
    """Asks once per agent, at its first completed turn (a loaded session's log is looked at
    then, once: a session titled before is left alone)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._considered: WeakSet[Agent] = WeakSet()

    async def turn_ended(self, agent: Agent, reason: TurnEndReason) -> None:
        session = agent.session
        if reason.kind != "completed" or session.header.parent_session is not None or agent in self._considered:
            return
        self._considered.add(agent)
        if any(isinstance(event, TitleEvent) for event in session.events):
            return
        asked = next(
            (e for e in session.events if isinstance(e, UserMessageEvent) and e.data.source.kind in USER_SOURCES), None
        )
        answered = next((e for e in reversed(session.events) if isinstance(e, AssistantMessageEvent)), None)
        if asked is None:
            return  # only commands so far (a `/compact`): nothing names the thread yet
        title = await self._ask(agent, _excerpt(asked, answered))
        # The user may have named it while the call ran: theirs wins.
        if title is not None and not any(isinstance(event, TitleEvent) for event in session.events):
            session.append(TitleEvent, TitleData(title=title, source="model"))

    async def _ask(self, agent: Agent, excerpt: str) -> str | None:
        options = agent.options
        request = LlmRequest(
            provider=options.provider,
            model=options.model,
            system=TITLE_SYSTEM,
            messages=[UserMessage(content=[TextContent(text=excerpt)])],
            max_tokens=self.config.max_tokens,
            route=agent.route + ROUTE_SUFFIX,
            session_id=agent.id,
        )
        text: list[str] = []
        try:
            stream = await agent.ctx.get(LLM).stream(request)
            async with aclosing(stream):
                async for chunk in stream:
                    if isinstance(chunk, TextDelta):
                        text.append(chunk.text)
                    elif isinstance(chunk, Finish) and chunk.reason.kind != "stop":
                        log.warning("no title for session %s: the model's call ended %s", agent.id, chunk.reason.kind)
                        return None
        except LlmError as exc:
            log.warning("no title for session %s: %s", agent.id, exc.message)
            return None
        lines = "".join(text).strip().splitlines()
        return one_line(lines[0].strip().strip("\"'“”").rstrip(".")) if lines else None


def _excerpt(asked: UserMessageEvent, answered: AssistantMessageEvent | None) -> str:
    """What the title call sees: the user's first message and the agent's last answer, cut short."""
    said = " ".join(block.text for block in asked.data.content if isinstance(block, TextContent))
    parts = [f"User: {brief(said, EXCERPT_CHARS)}"]
    if answered is not None:
        parts.append(f"Agent: {brief(_text_of(answered.data.content), EXCERPT_CHARS)}")
    return "\n\n".join(parts)


def _text_of(blocks: list[AssistantBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, TextBlock))


def apply(ctx: Context, config: Config) -> Disposer:
    if not config.enabled:
        return lambda: None
    return ctx.events.on(TURN_ENDED, Titler(config).turn_ended)
