"""How the user is asked over ACP: `session/request_permission`, the `Asker` of `acp_agent.permissions`.

`install(ctx, wire)` gives the composition's permissions service (when there is one) an asker that
sends the request on the session the calling agent's activity shows on, with the call's wire id
and `_meta` as its `tool_call` had them: a child's call is asked on its own session when the
client takes child sessions (the child's state is `requires_action` on its parent's session until
the answer comes), else on its top-level session (`<child route>/<call id>`, `_meta` naming the
parent's delegating call). The options are the request's: allow
once, allow always, (for an MCP server's tool) allow every tool of the server, reject once and
reject always; the answer is the id of the option picked, or `cancelled`.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from acp_agent.acp.cards import tool_card
from acp_agent.acp.errors import ClientError
from acp_agent.acp.schema import (
    PermissionOption,
    RequestPermissionParams,
    RequestPermissionResult,
    ToolCallProgress,
    ToolCallStatus,
)
from acp_agent.acp.wire import Wire
from acp_agent.kernel.context import Context
from acp_agent.kernel.scope import Disposer
from acp_agent.permissions.asker import Answer, Asker, PermissionRequest
from acp_agent.permissions.errors import AskFailed
from acp_agent.permissions.service import PERMISSIONS

METHOD = "session/request_permission"


def install(ctx: Context, wire: Wire) -> Disposer:
    """Ask `wire`'s client whenever `ctx`'s permissions service must ask; the disposer stops it."""
    permissions = ctx.find(PERMISSIONS)
    if permissions is None:
        return lambda: None
    return permissions.use_asker(AcpAsker(wire))


class AcpAsker(Asker):
    def __init__(self, wire: Wire) -> None:
        self._wire = wire

    async def ask(self, request: PermissionRequest) -> Answer:
        shown = self._wire.wire_of(request.session_id)
        if shown is None:
            raise AskFailed("the session is not open on this connection")
        session_id, mapper = shown.session_id, shown.mapper
        call = request.call
        assert call.tool is not None and call.params is not None  # only valid calls are asked about
        card = tool_card(call.tool, call.block.name, call.block.arguments)  # as its `tool_call` showed it
        # What the call would change (a write's diff), so the user sees what they approve.
        preview = await call.tool.preview(call.params, request.context)
        wire_id = mapper.wire_id(call.block.id)
        offered = request.options()
        options = [PermissionOption(option_id=option.id, name=option.name, kind=option.kind) for option in offered]
        params = RequestPermissionParams(
            session_id=session_id,
            tool_call=card.asked(wire_id, mapper.meta(card.meta), preview),
            options=options,
        )
        self._status(session_id, wire_id, "pending", mapper.meta())  # it waits for the user
        if shown.child is not None:
            self._wire.send([shown.child.waiting(True)])
        try:
            answer = RequestPermissionResult.model_validate(await self._wire.conn.request(METHOD, params.dump()))
            if shown.child is not None:  # answered: the child no longer waits
                self._wire.send([shown.child.waiting(False)])
        except ClientError as exc:
            raise AskFailed(exc.message or f"the client answered error {exc.code}") from None
        except ValidationError:
            raise AskFailed("the client's answer is not a permission outcome") from None
        outcome = answer.outcome
        if outcome.outcome == "cancelled":
            return "cancelled"
        picked = next((option.id for option in offered if option.id == outcome.option_id), None)
        if picked is None:
            raise AskFailed(f"the client picked {outcome.option_id!r}, which is not an option it was offered")
        if picked.startswith("allow"):
            self._status(session_id, wire_id, "in_progress", mapper.meta())  # approved: it runs now
        return picked

    def _status(self, session_id: str, wire_id: str, status: ToolCallStatus, meta: dict[str, Any] | None) -> None:
        self._wire.update(session_id, ToolCallProgress(tool_call_id=wire_id, status=status, meta=meta))
