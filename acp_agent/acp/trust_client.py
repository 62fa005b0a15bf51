"""How a project's trust is asked over ACP: a `session/request_permission` on a card of its own.

The schema asks a permission request for a tool call, so the question gets one: a `tool_call` of
kind `other` titled as the question, its content the files and what they would run, `pending`
while the user answers, then `completed` (trusted) or `failed`. The options: trust for this
session (`allow_once`), always (`allow_always`), do not trust (`reject_once`). Untrusted, the
user is told by a `notice` when the client shows notices, else an agent message.
"""

from __future__ import annotations

from itertools import count
from typing import TYPE_CHECKING

from pydantic import ValidationError

from acp_agent.acp.cards import text_content
from acp_agent.acp.errors import ClientError
from acp_agent.acp.notices import told
from acp_agent.acp.permission_client import METHOD
from acp_agent.acp.schema import (
    PermissionOption,
    PermissionToolCall,
    RequestPermissionParams,
    RequestPermissionResult,
    ToolCallProgress,
    ToolCallStart,
)
from acp_agent.acp.wire import Wire
from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Disposer
from acp_agent.trust import texts
from acp_agent.trust.service import TRUST, TrustAnswer, TrustAsker, TrustQuestion

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent

_ANSWERS: dict[str, TrustAnswer] = {"allow_once": "allow_once", "allow_always": "allow_always", "reject_once": "reject"}
_OPTIONS = [
    PermissionOption(option_id="allow_once", name=texts.ALLOW_ONCE, kind="allow_once"),
    PermissionOption(option_id="allow_always", name=texts.ALLOW_ALWAYS, kind="allow_always"),
    PermissionOption(option_id="reject_once", name=texts.REJECT, kind="reject_once"),
]


def install(ctx: Context, wire: Wire) -> Disposer:
    """Ask `wire`'s client the trust questions of `ctx`'s trust service (when there is one)."""
    trust = ctx.find(TRUST)
    if trust is None:
        return lambda: None
    return trust.use_asker(AcpTrustAsker(wire))


class AcpTrustAsker(TrustAsker):
    def __init__(self, wire: Wire) -> None:
        self._wire = wire
        self._ids = count(1)

    async def ask(self, agent: Agent, question: TrustQuestion) -> TrustAnswer:
        shown = self._wire.wire_of(agent.id)
        if shown is None:
            return "cancelled"
        session_id, card_id = shown.session_id, f"trust-{next(self._ids)}"
        content = text_content(question.paragraphs())
        self._wire.update(
            session_id,
            ToolCallStart(tool_call_id=card_id, title=question.title, kind="other", status="pending", content=content),
        )
        asked = PermissionToolCall(
            tool_call_id=card_id, title=question.title, kind="other", status="pending", content=content
        )
        params = RequestPermissionParams(session_id=session_id, tool_call=asked, options=_OPTIONS)
        found: TrustAnswer = "cancelled"
        try:
            answer = RequestPermissionResult.model_validate(await self._wire.conn.request(METHOD, params.dump()))
            if answer.outcome.outcome == "selected":
                found = _ANSWERS.get(answer.outcome.option_id, "cancelled")
        except (ClientError, ValidationError):
            pass  # no answer: untrusted
        trusted = found in ("allow_once", "allow_always")
        self._wire.update(
            session_id, ToolCallProgress(tool_call_id=card_id, status="completed" if trusted else "failed")
        )
        return found

    def tell(self, agent: Agent, text: str) -> None:
        shown = self._wire.wire_of(agent.id)
        if shown is None:
            return
        self._wire.update(shown.session_id, told(text, notices=self._wire.client.notices))
