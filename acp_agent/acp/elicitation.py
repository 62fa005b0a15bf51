"""How `ask_user` reaches the user over ACP: `elicitation/create` in form mode (unstable).

`install(ctx, wire)` offers `ask_user` to each top-level session of a client that advertised
`elicitation.form` (`ClientCapabilities.elicits`). `AcpQuestions(wire)` is the tools'
`UserQuestions`: the question goes out on the calling agent's session, tied to the call
(`toolCallId`, its wire id), as a form of one field, `answer`: text the user types, one of the
options (`enum`), or several (an array of them). The reply is read as the schema says
(`accept` with `content.answer`, `decline`, `cancel`); any other reply, or an error answer, fails
the call saying why. A turn cancelled while the form is open abandons the request, which the
connection withdraws with `$/cancel_request` (`Connection.request`).
"""

from __future__ import annotations

from typing import Any, Final

from acp_agent.acp.errors import ClientError
from acp_agent.acp.wire import Wire
from acp_agent.agent.agent import Agent
from acp_agent.agent.factory import PUBLISHED
from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.tools import texts
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.questions import AskFailed, AskUserParams, AskUserTool, Reply, UserQuestions
from acp_agent.tools.registry import TOOLS

METHOD: Final = "elicitation/create"
FIELD: Final = "answer"
"""The form's one field."""


def install(ctx: Context, wire: Wire) -> Disposer:
    """Give `ask_user` to each top-level agent published while `wire`'s client answers forms (read
    when the agent is published: `initialize` comes first); the disposer stops offering it."""
    tool = AskUserTool(AcpQuestions(wire))

    def offer(agent: Agent) -> None:
        if wire.client.elicits and agent.session.header.parent_session is None:
            ctx.get(TOOLS).register(tool, owner=agent.scope)

    return combine(ctx.events.on(PUBLISHED, offer), ctx.get(TOOLS).withhold(tool.name, texts.CANNOT_ASK))


def form_schema(question: AskUserParams) -> dict[str, Any]:
    """The `requestedSchema` of a question: its one required field, by what it offers."""
    field: dict[str, Any] = {"type": "string", "title": "Answer"}
    if question.options and question.multi_select:
        field = {"type": "array", "title": "Answers", "items": {"type": "string", "enum": question.options}}
    elif question.options:
        field["enum"] = question.options
    return {"type": "object", "properties": {FIELD: field}, "required": [FIELD]}


class AcpQuestions(UserQuestions):
    def __init__(self, wire: Wire) -> None:
        self._wire = wire

    async def ask(self, call: ToolCallContext, question: AskUserParams) -> Reply:
        shown = self._wire.wire_of(call.agent.id)
        if shown is None:
            raise AskFailed("the session is not open on this connection")
        params = {
            "sessionId": shown.session_id,
            "toolCallId": shown.mapper.wire_id(call.call_id),
            "mode": "form",
            "message": question.question,
            "requestedSchema": form_schema(question),
        }
        try:
            raw = await self._wire.conn.request(METHOD, params)
        except ClientError as exc:
            raise AskFailed(exc.message or f"the editor answered error {exc.code}") from None
        return _reply(raw, question)


def _reply(raw: Any, question: AskUserParams) -> Reply:
    """The client's answer as a `Reply`, checked against what the form asked."""
    action = raw.get("action") if isinstance(raw, dict) else None
    if action in ("decline", "cancel"):
        return Reply(action=action)
    if action != "accept":
        raise AskFailed(f"the editor's reply has no action this agent knows ({action!r})")
    content = raw.get("content")
    answer = content.get(FIELD) if isinstance(content, dict) else None
    if answer is None:
        return Reply(action="accept")
    if question.options and question.multi_select:
        if not isinstance(answer, list) or not all(item in question.options for item in answer):
            raise AskFailed("the editor's reply is not a list of the options offered")
    elif not isinstance(answer, str) or (question.options and answer not in question.options):
        raise AskFailed(f"the editor's reply is not {'one of the options offered' if question.options else 'text'}")
    return Reply(action="accept", answer=answer)
