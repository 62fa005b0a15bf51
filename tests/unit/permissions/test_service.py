"""`ctx.get(PERMISSIONS)` through the real loop: what runs, what is asked, what is refused, and what
the user's answers leave in the log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from acp_agent.agent.factory import Lineage
from acp_agent.agent.keys import AGENTS
from acp_agent.permissions import AskFailed, UnknownMode, texts
from acp_agent.permissions.events import ModeEvent
from acp_agent.permissions.rules import CommandRule, ScopeRule
from acp_agent.subagents.driver import PARENT_CANCELLED
from acp_agent.tools import Tool, ToolCallContext, ToolPresentation, ToolResult
from acp_agent.tools.base import GrantScope
from acp_agent.tools.registry import TOOLS
from tests.unit.permissions.conftest import Harness, ScriptedAsker, bash, call, codes, of_type, results

pytestmark = pytest.mark.anyio

Make = Callable[..., Harness]
DONE = {"text": "done"}


async def test_tools_that_need_no_approval_run_unasked_whatever_the_mode(harness: Make) -> None:
    (
        harness_ := harness(
            {
                "s1": [
                    {"toolCalls": [call("r", "read_file", path="a.txt"), call("t", "todo_write", todos=[])]},
                    {"toolCalls": [call("c", "subagent", description="d", prompt="p")]},
                    DONE,
                ],
                "s1/c": [DONE],
            },
            default="deny",
        )
    )
    (harness_.workspace / "a.txt").write_text("hello\n")
    async with harness_.ctx.running():
        agent = await harness_.ctx.get(AGENTS).create(cwd=str(harness_.workspace))
        harness_.permissions.set_mode(agent, "plan")
        await harness_.run(agent=agent)
    assert codes(agent) == [None, None, None]
    assert results(agent)[0].endswith("hello")


async def test_asked_calls_run_only_when_the_user_allows_them(harness: Make) -> None:
    h = harness(
        {"s1": [{"toolCalls": [bash("a", "touch allowed")]}, {"toolCalls": [bash("b", "touch rejected")]}, DONE]}
    )
    asker = ScriptedAsker(["allow_once", "reject_once"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.run()
    assert (h.workspace / "allowed").exists() and not (h.workspace / "rejected").exists()
    assert results(agent)[1] == "Error: the user declined to run this bash call"
    assert codes(agent) == [None, "declined"]
    assert [(r.session_id, r.route, r.tool, r.call.block.id) for r in asker.asked] == [
        (agent.id, "s1", "bash", "a"),
        (agent.id, "s1", "bash", "b"),
    ]
    assert of_type(agent, "permission/grant") == []  # one-shot answers are not kept


async def test_always_answers_hold_for_the_session_and_are_logged(harness: Make) -> None:
    h = harness(
        {
            "s1": [
                {"toolCalls": [bash("a")]},
                {"toolCalls": [bash("b")]},
                {"toolCalls": [call("w", "write_file", path="x.txt", content="x")]},
                {"toolCalls": [call("w2", "write_file", path="y.txt", content="y")]},
                DONE,
            ]
        }
    )
    asker = ScriptedAsker(["allow_always", "reject_always"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.run()
        assert h.permissions.grants(agent) == {"bash": "allow", "write_file": "reject"}
    assert [r.call.block.id for r in asker.asked] == ["a", "w"]
    assert codes(agent) == [None, None, "declined", "declined"]
    assert results(agent)[2] == "Error: the user declined to run this write_file call"
    assert results(agent)[3] == "Error: " + texts.declined_always("write_file")
    grants = [g.dump() for g in of_type(agent, "permission/grant")]
    assert grants == [
        {"tool": "bash", "decision": "allow", "callId": "a"},
        {"tool": "write_file", "decision": "reject", "callId": "w"},
    ]


async def test_without_an_asker_or_when_asking_fails_the_call_does_not_run(harness: Make) -> None:
    h = harness({"s1": [{"toolCalls": [bash("a", "touch a")]}, {"toolCalls": [bash("b", "touch b")]}, DONE]})
    async with h.ctx.running():
        agent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        await h.run(agent=agent)
    assert results(agent)[0] == "Error: " + texts.no_asker("bash")
    asker = ScriptedAsker([AskFailed("the client went away")])
    stop = h.permissions.use_asker(asker)
    assert results(agent)[1] == "Error: " + texts.no_asker("bash")
    stop()
    stop()  # once is enough


async def test_a_failed_ask_and_the_newest_asker(harness: Make) -> None:
    h = harness({"s1": [{"toolCalls": [bash("a", "touch a")]}, DONE]})
    old, new = ScriptedAsker(["allow_once"]), ScriptedAsker([AskFailed("the client went away")])
    h.permissions.use_asker(old)
    h.permissions.use_asker(new)
    async with h.ctx.running():
        agent = await h.run()
    assert (old.asked, len(new.asked)) == ([], 1)
    assert results(agent) == ["Error: " + texts.ask_failed("bash", "the client went away")]
    assert codes(agent) == ["approval_unavailable"] and not (h.workspace / "a").exists()


async def test_modes_are_presets_ask_auto_plan_full(harness: Make, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    h = harness(
        {
            "s1": [
                {
                    "toolCalls": [
                        call("w", "write_file", path="x.txt", content="x"),
                        bash("b", f"touch b && touch {outside}"),
                    ]
                },
                DONE,
                {
                    "toolCalls": [
                        call("e", "edit_file", path="x.txt", old_text="x", new_text="y"),
                        bash("c", "cat x.txt; touch c"),
                    ]
                },
                DONE,
                {"toolCalls": [bash("d", f"touch {outside}")]},
                DONE,
            ]
        }
    )
    asker = ScriptedAsker(["allow_once"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        assert (h.permissions.mode(agent), h.permissions.explicit_mode(agent)) == ("ask", None)
        h.permissions.set_mode(agent, "auto")
        await h.run(agent=agent)
        h.permissions.set_mode(agent, "plan")
        await h.run(agent=agent)
        assert not outside.exists()  # auto and plan: sandboxed
        h.permissions.set_mode(agent, "full")
        await h.run(agent=agent)
        assert outside.exists()  # full: unconfined, unasked
        with pytest.raises(
            UnknownMode, match="unknown session mode 'yolo'; the modes are 'ask', 'auto', 'plan', 'full'"
        ):
            h.permissions.set_mode(agent, "yolo")
        # A mode this deployment does not offer (written by another version) is ignored.
        agent.session.append(ModeEvent, {"modeId": "yolo", "source": {"kind": "user"}})
        assert (h.permissions.mode(agent), h.permissions.explicit_mode(agent)) == ("ask", None)
    assert asker.asked == []  # auto: the edit and the command ran unasked; plan: the command too
    assert codes(agent) == [None, None, "plan_mode", None, None]
    assert (h.workspace / "b").exists() and not (h.workspace / "c").exists()  # plan: read-only
    assert results(agent)[3] == (
        f"xtouch: cannot touch 'c': Permission denied\n[sandbox: writing {h.workspace}/c is not allowed in"
        " read-only mode; the session is read-only, so describe the change instead]\n[exit code 1]"
    )
    assert (h.workspace / "x.txt").read_text() == "x"
    assert [m.dump() for m in of_type(agent, "session/mode")][:3] == [
        {"modeId": "auto", "source": {"kind": "user"}},
        {"modeId": "plan", "source": {"kind": "user"}},
        {"modeId": "full", "source": {"kind": "user"}},
    ]


async def test_full_access_is_offered_only_when_the_deployment_allows_it(harness: Make) -> None:
    h = harness({"s1": [DONE]}, sandbox={"allowFullAccess": False})
    assert [m.id for m in h.permissions.modes] == ["ask", "auto", "plan"]
    async with h.ctx.running():
        agent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        with pytest.raises(UnknownMode):
            h.permissions.set_mode(agent, "full")
        agent.session.append(ModeEvent, {"modeId": "full", "source": {"kind": "user"}})  # an older grant of it
        assert h.permissions.mode(agent) == "ask"


async def test_escalation_asks_once_with_the_justification_and_runs_unconfined(harness: Make, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    escalated = call("e", "bash", command=f"touch {outside}", escalate=True, justification="write the cache")
    h = harness(
        {
            "s1": [
                {"toolCalls": [escalated]},
                {"toolCalls": [{**escalated, "id": "f"}]},
                DONE,
                {"toolCalls": [{**escalated, "id": "g"}]},
                DONE,
            ]
        },
        default="allow",
    )
    asker = ScriptedAsker(["reject_once", "allow_once"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.run()
        assert [o.kind for o in asker.asked[0].options()] == ["allow_once", "reject_once"]
        preview = await asker.asked[0].call.tool.preview(asker.asked[0].call.params, asker.asked[0].context)  # type: ignore[union-attr]
        assert preview is not None and preview.notes == [
            f"Run without the sandbox: touch {outside}\nWhy: write the cache"
        ]
        h.permissions.set_mode(agent, "plan")
        await h.run(agent=agent)
    assert codes(agent) == ["declined", None, "plan_mode"]  # asked although the deployment allows bash
    assert outside.exists() and len(asker.asked) == 2


async def test_a_confined_command_without_a_sandbox_is_refused_before_anyone_is_asked(
    harness: Make, tmp_path: Path
) -> None:
    h = harness({"s1": [{"toolCalls": [bash("a", "touch a")]}, DONE]}, sandbox={"backend": "none"})
    asker = ScriptedAsker([])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.run()
    assert codes(agent) == ["sandbox_unavailable"] and asker.asked == []
    assert "turned the sandbox off (backend: none)" in results(agent)[0] and not (h.workspace / "a").exists()


async def test_the_deployment_default_mode_and_a_deny_rule(harness: Make) -> None:
    h = harness(
        {"s1": [{"toolCalls": [call("w", "write_file", path="x.txt", content="x"), bash("b")]}, DONE]},
        defaultMode="auto",
        tools={"bash": "deny"},
    )
    async with h.ctx.running():
        agent = await h.run()
    assert h.permissions.mode(agent) == "auto" and h.permissions.explicit_mode(agent) is None
    assert codes(agent) == [None, "denied"]
    assert results(agent)[1] == "Error: " + texts.denied("bash")


CHILD_BASH = {
    "s1": [{"toolCalls": [call("c", "subagent", description="d", prompt="p")]}, DONE],
    "s1/c": [{"toolCalls": [bash("b")]}, DONE],
}


async def test_a_child_starts_in_its_parents_explicit_mode_only(harness: Make) -> None:
    h = harness({**CHILD_BASH, "s2": CHILD_BASH["s1"], "s2/c": CHILD_BASH["s1/c"]}, default="allow", defaultMode="plan")
    async with h.ctx.running():
        parent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        h.permissions.set_mode(parent, "auto")
        await h.run(agent=parent)
        default_parent = await h.run()  # in the deployment's default mode, plan
    child, default_child = h.agent("s1/c"), h.agent("s2/c")
    assert [m.dump() for m in of_type(child, "session/mode")] == [
        {"modeId": "auto", "source": {"kind": "inherited", "session": parent.id}}
    ]
    assert child.session.events[0].type == "session/mode"  # before the child's first turn
    assert codes(child) == [None]  # auto, and bash is allowed by the deployment
    assert of_type(default_child, "session/mode") == []  # a default is not a choice to inherit
    assert codes(default_child) == [None] and results(default_child) == ["ran\n"]  # plan: read-only, unasked
    assert h.permissions.mode(default_parent) == "plan"


async def test_a_childs_own_switch_wins_over_the_inherited_mode(harness: Make) -> None:
    h = harness(CHILD_BASH, default="allow")
    installed = []

    async with h.ctx.running():
        parent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        h.permissions.set_mode(parent, "plan")
        install = h.permissions.inherit(parent)
        assert install is not None
        child = await h.ctx.get(AGENTS).create(
            cwd=str(h.workspace), lineage=Lineage(parent_session=parent.id, delegation_depth=1), setup=install
        )
        installed.append(child)
        assert h.permissions.mode(child) == "plan"
        h.permissions.set_mode(child, "ask")
        assert (h.permissions.mode(child), h.permissions.mode(parent)) == ("ask", "plan")
        await child.dispose()


async def test_a_childs_always_answer_holds_for_the_whole_thread(harness: Make) -> None:
    h = harness(
        {
            "s1": [
                {"toolCalls": [call("c", "subagent", description="d", prompt="p")]},
                {"toolCalls": [bash("own")]},
                DONE,
            ],
            "s1/c": [{"toolCalls": [bash("b")]}, DONE],
        }
    )
    asker = ScriptedAsker(["allow_always"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        parent = await h.run()
    child = h.agent("s1/c")
    assert [(r.session_id, r.route) for r in asker.asked] == [(child.id, "s1/c")]
    assert [g.dump() for g in of_type(parent, "permission/grant")] == [
        {"tool": "bash", "decision": "allow", "route": "s1/c", "callId": "b"}
    ]
    assert of_type(child, "permission/grant") == []
    assert codes(parent) == [None, None] and codes(child) == [None]


async def test_a_cancelled_request_stops_the_turn(harness: Make) -> None:
    h = harness({"s1": [{"toolCalls": [bash("a", "touch a")]}, DONE]})
    h.permissions.use_asker(ScriptedAsker(["cancelled"]))
    async with h.ctx.running():
        agent = await h.run()
    [end] = of_type(agent, "turn/end")
    assert end.reason.kind == "aborted" and end.reason.reason == texts.CANCELLED
    assert codes(agent) == ["cancelled"] and not (h.workspace / "a").exists()


async def test_a_cancelled_request_of_a_child_stops_the_top_level_turn(harness: Make) -> None:
    h = harness(CHILD_BASH)
    h.permissions.use_asker(ScriptedAsker(["cancelled"]))
    async with h.ctx.running():
        parent = await h.run()
    child = h.agent("s1/c")
    assert [e.reason.dump() for e in of_type(parent, "turn/end")] == [{"kind": "aborted", "reason": texts.CANCELLED}]
    assert [e.reason.dump() for e in of_type(child, "turn/end")] == [{"kind": "aborted", "reason": PARENT_CANCELLED}]
    assert codes(child) == ["cancelled"]


async def test_a_cancelled_request_of_an_agent_whose_top_level_is_idle_stops_its_own_turn(harness: Make) -> None:
    h = harness({"s1": [DONE], "s2": [{"toolCalls": [bash("a")]}, DONE]})
    h.permissions.use_asker(ScriptedAsker(["cancelled"]))
    async with h.ctx.running():
        parent = await h.run()
        orphan = await h.ctx.get(AGENTS).create(
            cwd=str(h.workspace), route="s2", lineage=Lineage(parent_session=parent.id, delegation_depth=1)
        )
        await h.run(agent=orphan)
    assert [e.reason.dump() for e in of_type(orphan, "turn/end")] == [{"kind": "aborted", "reason": texts.CANCELLED}]


async def test_an_agent_whose_parent_is_gone_is_its_own_thread(harness: Make) -> None:
    h = harness({"s1": [{"toolCalls": [bash("a")]}, {"toolCalls": [bash("b")]}, DONE]})
    h.permissions.use_asker(ScriptedAsker(["allow_always"]))
    async with h.ctx.running():
        agent = await h.ctx.get(AGENTS).create(
            cwd=str(h.workspace), lineage=Lineage(parent_session="gone", delegation_depth=1)
        )
        await h.run(agent=agent)
        assert h.permissions.grants(agent) == {"bash": "allow"}
    assert [g.dump() for g in of_type(agent, "permission/grant")] == [
        {"tool": "bash", "decision": "allow", "callId": "a"}
    ]


async def test_a_waiting_request_is_cancelled_with_its_turn(harness: Make) -> None:
    h = harness({"s1": [{"toolCalls": [bash("a", "touch a")]}, DONE]})
    asker = ScriptedAsker(["allow_once"])
    asker.hold = True
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        ticket = agent.followup([])
        with anyio.fail_after(5):
            await asker.waiting.wait()
            agent.cancel("stop")
            reason = await ticket.wait()
    assert reason.dump() == {"kind": "aborted", "reason": "stop"}
    assert codes(agent) == ["cancelled"] and not (h.workspace / "a").exists()


class _Params(BaseModel):
    path: str


class _ShowsAsAnEdit(Tool[_Params]):
    """Shown as an edit, but it does not declare that it only edits files."""

    name = "patch_remote"
    description = "Patches something elsewhere."
    Params = _Params
    needs_approval = True

    def present(self, params: _Params) -> ToolPresentation:
        return ToolPresentation(title=f"Patch {params.path}", kind="edit")

    async def run(self, params: _Params, call: ToolCallContext) -> ToolResult:
        return ToolResult.text("patched")


async def test_the_auto_mode_runs_unasked_what_declares_it_edits_files_not_what_looks_like_an_edit(
    harness: Make,
) -> None:
    h = harness(
        {
            "s1": [
                {
                    "toolCalls": [
                        call("p", "patch_remote", path="x"),
                        call("w", "write_file", path="x.txt", content="x"),
                    ]
                },
                DONE,
            ]
        }
    )
    h.ctx.get(TOOLS).register(_ShowsAsAnEdit())
    asker = ScriptedAsker(["allow_once"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        h.permissions.set_mode(agent, "auto")
        await h.run(agent=agent)
    assert [r.call.block.id for r in asker.asked] == ["p"]
    assert results(agent)[0] == "patched" and (h.workspace / "x.txt").read_text() == "x"


async def test_saved_rules_reject_and_allow_commands_of_the_project(harness: Make, tmp_path: Path) -> None:
    script = {"s1": [{"toolCalls": [bash("a", "git push --force")]}, {"toolCalls": [bash("b", "git push origin")]},
                     {"toolCalls": [bash("c", "make test")]}, {"toolCalls": [bash("d", "make test && make docs")]},
                     DONE]}  # fmt: skip
    h = harness(script)
    asker = ScriptedAsker(["reject_prefix", "allow_once"])
    h.permissions.use_asker(asker)
    assert h.permissions.rules is not None
    h.permissions.rules.add(h.workspace, CommandRule("allow", "make test"))
    async with h.ctx.running():
        agent = await h.run()
    assert [(r.call.block.id, r.prefix) for r in asker.asked] == [("a", "git push"), ("d", None)]
    assert codes(agent) == ["declined", "declined", None, None]
    assert results(agent)[1] == "Error: " + texts.rule_denied("git push")
    assert h.permissions.rules.rules(h.workspace) == [
        CommandRule("deny", "git push"),
        CommandRule("allow", "make test"),
    ]
    assert (tmp_path / "config" / "permissions.json").exists()


async def test_a_childs_escalation_asks_on_its_thread_like_its_other_approvals(harness: Make, tmp_path: Path) -> None:
    escalated = call("e", "bash", command=f"touch {tmp_path}/from-child", escalate=True, justification="outside")
    h = harness(
        {
            "s1": [{"toolCalls": [call("c", "subagent", description="d", prompt="p")]}, DONE],
            "s1/c": [{"toolCalls": [escalated]}, DONE],
        },
        default="allow",
    )
    asker = ScriptedAsker(["allow_once"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        parent = await h.ctx.get(AGENTS).create(cwd=str(h.workspace))
        h.permissions.set_mode(parent, "auto")
        await h.run(agent=parent)
    [request] = asker.asked
    assert (request.route, request.escalation, [o.kind for o in request.options()]) == (
        "s1/c",
        True,
        ["allow_once", "reject_once"],
    )
    assert (tmp_path / "from-child").exists()


class _Peek(Tool[_Params]):
    """Reads something a host serves: asks in the ask mode, with its host as a grant scope."""

    name = "peek"
    description = "Reads a host."
    Params = _Params
    needs_approval = True
    only_reads = True

    def grant_scope(self, params: _Params) -> GrantScope | None:
        host = params.path.partition("/")[0]
        return GrantScope(key=host, label=f"Always allow peeking at {host}")

    async def run(self, params: _Params, call: ToolCallContext) -> ToolResult:
        return ToolResult.text(f"peeked {params.path}")


async def test_a_scope_answer_is_saved_for_the_project_and_reading_tools_run_unasked_in_auto_and_plan(
    harness: Make, tmp_path: Path
) -> None:
    peeks = [{"toolCalls": [call(f"p{n}", "peek", path=path)]} for n, path in enumerate(["a/1", "a/2", "b/1"])]
    again = {"toolCalls": [call("q", "peek", path="a/3")]}
    h = harness({"s1": [*peeks, DONE], "s2": [again, DONE], "s3": [again, DONE], "s4": [again, DONE]})
    h.ctx.get(TOOLS).register(_Peek())
    asker = ScriptedAsker(["allow_scope_always", "allow_once", "allow_once"])
    h.permissions.use_asker(asker)
    other = tmp_path / "other"
    other.mkdir()
    async with h.ctx.running():
        agent = await h.run()
        same_project = await h.run()  # a new thread of the project: the saved rule holds
        elsewhere = await h.run(agent=await h.ctx.get(AGENTS).create(cwd=str(other)))
        planning = await h.ctx.get(AGENTS).create(cwd=str(other))
        h.permissions.set_mode(planning, "plan")
        await h.run(agent=planning)
    assert [r.call.block.id for r in asker.asked] == ["p0", "p2", "q"]
    assert asker.asked[2].context.cwd == other  # another project is asked
    assert [(o.id, o.kind, o.name) for o in asker.asked[0].options()][:3] == [
        ("allow_once", "allow_once", "Allow once"),
        ("allow_always", "allow_always", "Always allow peek"),
        ("allow_scope_always", "allow_always", "Always allow peeking at a"),
    ]
    assert results(agent) == ["peeked a/1", "peeked a/2", "peeked b/1"]
    assert results(same_project) == results(elsewhere) == ["peeked a/3"]
    assert of_type(agent, "permission/grant") == []  # kept in the project's rules, not the thread
    assert h.permissions.rules is not None
    assert h.permissions.rules.scope_rules(h.workspace) == [ScopeRule("peek", "a")]
    assert h.permissions.rules.scope_rules(other) == []
    assert results(planning) == ["peeked a/3"]  # plan mode: it only reads, nobody was asked


async def test_without_a_rule_file_a_scope_answer_holds_for_the_thread(harness: Make) -> None:
    peeks = [{"toolCalls": [call(f"p{n}", "peek", path=path)]} for n, path in enumerate(["a/1", "a/2"])]
    h = harness({"s1": [*peeks, DONE]})
    h.ctx.get(TOOLS).register(_Peek())
    h.permissions.rules = None
    asker = ScriptedAsker(["allow_scope_always"])
    h.permissions.use_asker(asker)
    async with h.ctx.running():
        agent = await h.run()
    assert [r.call.block.id for r in asker.asked] == ["p0"]
    assert [g.dump() for g in of_type(agent, "permission/grant")] == [
        {"tool": "peek", "decision": "allow", "callId": "p0", "scope": "a"}
    ]
