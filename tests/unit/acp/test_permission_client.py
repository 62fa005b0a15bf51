"""`session/request_permission`: what the user is shown, and what their answer means."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_agent.acp.children import ChildSession
from acp_agent.acp.errors import ClientError
from acp_agent.acp.permission_client import AcpAsker, install
from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.acp.wire import AgentWire, Wire
from acp_agent.kernel import Context
from acp_agent.permissions import AskFailed, PermissionRequest, Permissions, Policy
from acp_agent.permissions.service import PERMISSIONS
from acp_agent.session.content import ToolCallBlock
from acp_agent.tools import BashTool, EditFileTool, ToolRegistry, prepare
from tests.unit.tools.helpers import call_context

pytestmark = pytest.mark.anyio


@dataclass
class FakeConnection:
    answer: Any = None
    sent: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    notes: list[dict[str, Any]] = field(default_factory=list)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        assert method == "session/update"
        self.notes.append(params["update"])

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.sent.append((method, params))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class FakeWire(Wire):
    conn: FakeConnection  # what the asker uses of the connection: `request`, and `notify` through `update`


def request(
    name: str = "bash",
    arguments: str = '{"command": "ls", "description": "List"}',
    session: str = "agent-1",
    cwd: Path | None = None,
) -> PermissionRequest:
    registry = ToolRegistry()
    registry.register(BashTool())
    registry.register(EditFileTool())
    call = prepare(ToolCallBlock(id="call_1", name=name, arguments=arguments), registry, None)
    return PermissionRequest(session_id=session, route="s1", call=call, context=call_context(cwd=cwd))


def server(answer: Any, origin: ChildOrigin | None = None) -> FakeWire:
    """A wire whose client answers `answer`, showing agent-1 on `wire-session`."""
    wire = FakeWire(FakeConnection(answer))  # type: ignore[arg-type]
    wire.show("agent-1", AgentWire("wire-session", UpdateMapper(lambda name: None, origin)))
    return wire


@pytest.mark.parametrize("kind", ["allow_once", "allow_always", "reject_once", "reject_always"])
async def test_the_user_picks_one_of_four_options(kind: str) -> None:
    fake = server({"outcome": {"outcome": "selected", "optionId": kind}, "_meta": {"x": 1}})
    assert await AcpAsker(fake).ask(request()) == kind  # type: ignore[arg-type]
    [(method, params)] = fake.conn.sent
    assert method == "session/request_permission"
    assert params == {
        "sessionId": "wire-session",
        "toolCall": {
            "toolCallId": "call_1",
            "title": "ls",
            "kind": "execute",
            "status": "pending",
            "rawInput": {"command": "ls", "description": "List"},
            "content": [{"type": "content", "content": {"type": "text", "text": "List"}}],
        },
        "options": [
            {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "allow_always", "name": "Always allow bash", "kind": "allow_always"},
            {"optionId": "reject_once", "name": "Reject once", "kind": "reject_once"},
            {"optionId": "reject_always", "name": "Always reject bash", "kind": "reject_always"},
        ],
    }
    # The card waits for the user, then runs if allowed (a rejected call's result says so).
    statuses = [(note["toolCallId"], note["status"]) for note in fake.conn.notes]
    assert statuses == [("call_1", "pending")] + ([("call_1", "in_progress")] if kind.startswith("allow") else [])


async def test_a_childs_call_is_asked_on_its_top_level_session_under_its_wire_id(tmp_path: Path) -> None:
    origin = ChildOrigin(route="s1/call_helper", parent_tool_call_id="call_helper")
    fake = server({"outcome": {"outcome": "cancelled"}}, origin)
    edit = request("edit_file", '{"path": "a.txt", "old_text": "a", "new_text": "b"}', cwd=tmp_path)
    assert await AcpAsker(fake).ask(edit) == "cancelled"
    [(_, params)] = fake.conn.sent
    assert params["sessionId"] == "wire-session"
    meta = {
        "acpAgent": {"route": "s1/call_helper", "parentToolCallId": "call_helper"},
        "claudeCode": {"parentToolUseId": "call_helper"},
    }
    assert params["toolCall"] == {
        "toolCallId": "s1/call_helper/call_1",
        "title": "Edit a.txt",
        "kind": "edit",
        "status": "pending",
        "rawInput": {"path": "a.txt", "old_text": "a", "new_text": "b"},
        "_meta": meta,
    }  # no a.txt: the edit would fail, so there is no change to show
    assert fake.conn.notes == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "s1/call_helper/call_1", "status": "pending", "_meta": meta}
    ]


async def test_a_child_sessions_call_is_asked_on_its_own_session_and_it_requires_action_meanwhile() -> None:
    origin = ChildOrigin(route="s1/call_helper", parent_tool_call_id="call_helper", own_session=True)
    fake = FakeWire(FakeConnection({"outcome": {"outcome": "selected", "optionId": "allow_once"}}))  # type: ignore[arg-type]
    child = ChildSession("kid", "top", "s1/call_helper", "/work")
    fake.show("kid", AgentWire("kid", UpdateMapper(lambda name: None, origin), child))
    assert await AcpAsker(fake).ask(request(session="kid")) == "allow_once"
    [(_, params)] = fake.conn.sent
    assert (params["sessionId"], params["toolCall"]["toolCallId"]) == ("kid", "call_1")
    assert params["toolCall"]["_meta"] == {"acpAgent": {"route": "s1/call_helper"}}
    assert [(n["sessionUpdate"], n.get("status") or n["state"]["state"]) for n in fake.conn.notes] == [
        ("tool_call_update", "pending"),
        ("subagent_update", "requires_action"),  # on the parent's session, while the user decides
        ("subagent_update", "running"),
        ("tool_call_update", "in_progress"),
    ]


async def test_an_edit_is_asked_about_with_the_change_it_would_make(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one a\n", encoding="utf-8")
    fake = server({"outcome": {"outcome": "selected", "optionId": "reject_once"}})
    edit = request("edit_file", '{"path": "a.txt", "old_text": "a", "new_text": "b"}', cwd=tmp_path)
    assert await AcpAsker(fake).ask(edit) == "reject_once"
    [(_, params)] = fake.conn.sent
    path = str(tmp_path / "a.txt")
    assert params["toolCall"]["content"] == [{"type": "diff", "path": path, "oldText": "one a\n", "newText": "one b\n"}]
    assert params["toolCall"]["locations"] == [{"path": path, "line": 1}]
    assert (tmp_path / "a.txt").read_text() == "one a\n"  # shown, not made


async def test_a_call_without_arguments_shows_empty_raw_input() -> None:
    fake = server({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
    asked = request()
    # Some endpoints send "" for a call without arguments (bash needs some: only the block changes).
    empty = asked._replace(call=asked.call._replace(block=ToolCallBlock(id="call_1", name="bash", arguments=" ")))
    await AcpAsker(fake).ask(empty)
    assert fake.conn.sent[0][1]["toolCall"]["rawInput"] == {}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (ClientError(-32601, "Method not found"), "Method not found"),
        (ClientError(-32603, ""), "the client answered error -32603"),
        ({"outcome": {"outcome": "maybe"}}, "the client's answer is not a permission outcome"),
        (None, "the client's answer is not a permission outcome"),
        (
            {"outcome": {"outcome": "selected", "optionId": "sudo"}},
            "the client picked 'sudo', which is not an option it was offered",
        ),
    ],
)
async def test_an_answer_that_is_no_answer_fails_the_ask(answer: Any, message: str) -> None:
    with pytest.raises(AskFailed, match=message):
        await AcpAsker(server(answer)).ask(request())


async def test_an_agent_no_session_of_this_connection_shows_cannot_be_asked_about() -> None:
    with pytest.raises(AskFailed, match="the session is not open on this connection"):
        await AcpAsker(server(None)).ask(request(session="elsewhere"))


def test_install_gives_the_permissions_service_an_asker_when_there_is_one() -> None:
    ctx = Context()
    install(ctx, server(None))()  # no permissions service: nothing to do, nothing to undo
    permissions = Permissions(Policy())
    ctx.provide(PERMISSIONS, permissions)
    stop = install(ctx, server(None))
    assert [type(asker) for asker in permissions._askers] == [AcpAsker]
    stop()
    assert permissions._askers == []
