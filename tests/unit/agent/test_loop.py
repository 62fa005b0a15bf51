"""The agent loop through the real parts: kernel, session log, replay/scripted model, bash."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.agent import Agent
from acp_agent.agent.keys import AGENTS, PROMPT
from acp_agent.kernel import Context
from acp_agent.session import SessionEvent, TextContent
from acp_agent.tools import texts as tool_texts
from acp_agent.tools.registry import TOOLS
from tests.paths import UPSTREAM
from tests.unit.agent.conftest import spied

pytestmark = pytest.mark.anyio

needs_upstream = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="shared/upstream is absent")


def text(value: str) -> list[TextContent]:
    return [TextContent(text=value)]


def types(events: list[SessionEvent] | list[dict[str, Any]]) -> list[str]:
    return [e["type"] if isinstance(e, dict) else e.type for e in events]


def kinds(agent: Agent) -> list[str]:
    return types(agent.session.all_events())


def of_type(agent: Agent, kind: str) -> list[Any]:
    return [e.data for e in agent.session.events if e.type == kind]


async def first(agent: Agent, kind: str, chunk: str | None = None) -> None:
    """Wait until the agent logs an event of `kind` (an `assistant/chunk` of type `chunk`)."""
    seen = anyio.Event()

    def watch(event: SessionEvent) -> None:
        if event.type == kind and (chunk is None or event.data.chunk.type == chunk):
            seen.set()

    unsubscribe = agent.session.subscribe(watch)
    with anyio.fail_after(5):
        await seen.wait()
    unsubscribe()


@needs_upstream
@pytest.mark.parametrize("scenario", ["text-turn", "tool-call-turn"])
async def test_replayed_turn_logs_the_recorded_event_sequence(
    scenario: str, replayed: Callable[[Path], Context], tmp_path: Path
) -> None:
    recorded = [json.loads(line) for line in (UPSTREAM / scenario / "session.jsonl").read_text().splitlines()]
    prompt = recorded[2]["data"]["content"][0]["text"]
    ctx = replayed(UPSTREAM / scenario)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        reason = await agent.followup(text(prompt)).wait()
        assert reason.kind == "completed"
        assert kinds(agent) == types(recorded[1:])
        assert [e.seq for e in agent.session.all_events()] == list(range(len(recorded) - 1))
        session_id = agent.id
    on_disk = (tmp_path / "sessions" / session_id / "session.jsonl").read_text().splitlines()
    assert types([json.loads(line) for line in on_disk[1:]]) == types(recorded[1:])
    if scenario == "tool-call-turn":
        [result] = [json.loads(line)["data"] for line in on_disk if '"tool/result"' in line]
        assert result["content"] == [{"type": "text", "text": "SNAPSHOT_OK\n"}]  # bash really ran


async def test_a_tool_turn_runs_bash_in_the_session_cwd(scripted: Callable[..., Context], tmp_path: Path) -> None:
    call = {"id": "c1", "name": "bash", "arguments": {"command": "pwd; echo made > out.txt", "description": "d"}}
    ctx = scripted([{"toolCalls": [call]}, {"text": "done"}])
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(workspace))
        assert (await agent.followup(text("go")).wait()).kind == "completed"
    assert (workspace / "out.txt").read_text() == "made\n"
    [result] = of_type(agent, "tool/result")
    assert result.content[0].text == f"{workspace}\n"


async def test_the_model_sees_the_whole_conversation_and_the_system_prompt(tmp_path: Path) -> None:
    ctx, requests = spied(tmp_path, [{"text": "one"}, {"text": "two"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup(text("first")).wait()
        await agent.followup(text("second")).wait()
    assert [m.role for m in requests[1].messages] == ["user", "assistant", "user"]
    assert requests[1].messages[1].content[0].text == "one"
    assert f"working for the user in {tmp_path} through their editor, running on the model test" in requests[0].system
    assert "- bash:" in requests[0].system
    assert [tool.name for tool in requests[0].tools] == ["bash"]
    assert requests[0].route == "s1"


async def test_cancel_mid_stream_keeps_the_partial_text_and_the_agent_goes_on(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"hang": True}, {"text": "again"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ticket = agent.followup(text("hang"))
        await first(agent, "assistant/chunk", "text-delta")
        agent.cancel("stopped by the user")
        reason = await ticket.wait()
        assert reason.kind == "aborted" and reason.reason == "stopped by the user"
        [message] = of_type(agent, "assistant/message")
        assert message.interrupted is True
        assert message.content[0].text == "partial"
        assert kinds(agent)[-2:] == ["step/end", "turn/end"]
        assert (await agent.followup(text("next")).wait()).kind == "completed"


async def test_cancel_kills_a_running_command_and_answers_the_call(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    call = {"id": "c1", "name": "bash", "arguments": {"command": "sleep 30", "description": "wait"}}
    ctx = scripted([{"toolCalls": [call]}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ticket = agent.followup(text("wait"))
        await first(agent, "tool/call")
        await anyio.sleep(0.1)
        with anyio.fail_after(3):
            agent.cancel()
            assert (await ticket.wait()).kind == "aborted"
    [result] = of_type(agent, "tool/result")
    assert result.is_error and result.error.code == "cancelled"
    assert result.content[0].text.startswith("Error: ")


async def test_step_cap_ends_a_runaway_turn(scripted: Callable[..., Context], tmp_path: Path) -> None:
    call = {"id": "c", "name": "bash", "arguments": {"command": "true", "description": "loop"}}
    ctx = scripted([{"toolCalls": [call]}] * 2, maxSteps=2)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert (await agent.followup(text("loop")).wait()).kind == "max-steps"
    assert len(of_type(agent, "step/start")) == 2


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ({"text": "cut", "finish": "max-tokens"}, {"kind": "max-tokens"}),
        (
            {"text": "half", "finish": "error", "message": "boom", "code": "X"},
            {"kind": "error", "step": 1, "message": "boom", "code": "X"},
        ),
        (
            {"finish": "error"},
            {"kind": "error", "step": 1, "message": "the model reported an error", "code": "MODEL_ERROR"},
        ),
        (
            {"throw": {"message": "denied", "code": "AUTH", "status": 401}},
            {"kind": "error", "step": 1, "message": "denied", "code": "AUTH"},
        ),
    ],
)
async def test_how_a_model_call_ends_the_turn(
    call: dict[str, Any], expected: dict[str, Any], scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([call])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        reason = await agent.followup(text("x")).wait()
    assert reason.dump() == expected
    assert kinds(agent)[-2:] == ["step/end", "turn/end"]


async def test_a_thrown_request_after_some_text_keeps_it_as_interrupted(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"throw": {"message": "reset", "code": "TRANSPORT", "text": "so far"}}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert (await agent.followup(text("x")).wait()).kind == "error"
    [message] = of_type(agent, "assistant/message")
    assert message.interrupted and message.content[0].text == "so far"


async def test_a_stream_without_finish_is_an_error(tmp_path: Path, replayed: Callable[[Path], Context]) -> None:
    fixtures = tmp_path / "fx"
    fixtures.mkdir()
    (fixtures / "session.jsonl").write_text(
        json.dumps({"type": "session", "version": 0, "id": "x", "createdAt": 0}) + "\n"
    )
    override = [{"kind": "chunks", "chunks": [{"type": "text-delta", "index": 0, "text": "hi"}]}]
    (fixtures / "replay.override.json").write_text(json.dumps(override))
    ctx = replayed(fixtures)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        reason = await agent.followup(text("x")).wait()
    assert reason.dump() == {
        "kind": "error",
        "step": 1,
        "message": "the model stream ended without a finish chunk",
        "code": "STREAM_CLOSED",
    }


async def test_bad_tool_calls_become_error_results_and_the_turn_goes_on(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    calls = [
        {"id": "a", "name": "nope", "arguments": {}},
        {"id": "b", "name": "bash", "arguments": {"description": "no command"}},
    ]
    ctx = scripted([{"toolCalls": calls}, {"text": "recovered"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert (await agent.followup(text("x")).wait()).kind == "completed"
    results = of_type(agent, "tool/result")
    assert [r.call_id for r in results] == ["a", "b"]
    assert results[0].content[0].text == "Error: unknown tool 'nope'"
    assert results[1].content[0].text.startswith("Error: invalid arguments for 'bash'")


async def test_steering_joins_the_next_step(scripted: Callable[..., Context], tmp_path: Path) -> None:
    call = {"id": "c", "name": "bash", "arguments": {"command": "sleep 0.3", "description": "d"}}
    ctx = scripted([{"toolCalls": [call]}, {"text": "ok"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ticket = agent.followup(text("go"))
        await first(agent, "tool/call")
        agent.steer(text("also this"))
        await ticket.wait()
    sources = [(m.source.kind, m.content[0].text) for m in of_type(agent, "user/message")]
    assert sources == [("user", "go"), ("steer", "also this")]
    second_step = kinds(agent).index("step/start", kinds(agent).index("step/end"))
    assert kinds(agent)[second_step - 1] == "user/message"


async def test_steering_the_last_step_is_the_next_turns_message(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"text": "partial"}, {"text": "seen"}])
    running: list[bool] = []

    def steer_once_answered(event: SessionEvent) -> None:
        if event.type == "assistant/message" and not running:  # the last step's call is over
            running.append(agent.turn_running)
            agent.steer(text("one more thing"))

    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        agent.session.subscribe(steer_once_answered)
        await agent.followup(text("go")).wait()
        await agent.when_idle()
    sources = [(m.source.kind, m.content[0].text) for m in of_type(agent, "user/message")]
    assert running == [True] and sources == [("user", "go"), ("steer", "one more thing")]
    assert [e.reason.kind for e in of_type(agent, "turn/end")] == ["completed", "completed"]
    assert not agent.turn_running


async def test_steering_an_idle_agent_starts_a_turn(scripted: Callable[..., Context], tmp_path: Path) -> None:
    ctx = scripted([{"text": "ok"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        agent.steer(text("hello"))
        assert agent.busy
        await agent.when_idle()
    assert of_type(agent, "turn/end")[0].reason.kind == "completed"


async def test_queued_turns_run_in_order(scripted: Callable[..., Context], tmp_path: Path) -> None:
    ctx = scripted([{"text": "one"}, {"text": "two"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        tickets = [agent.followup(text("a")), agent.followup(text("b"))]
        await agent.when_idle()
        assert [t.reason.kind for t in tickets if t.reason] == ["completed", "completed"]
    assert [e.turn for e in of_type(agent, "turn/end")] == [1, 2]


async def test_dispose_ends_the_open_turn_and_leaves_nothing_running(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"hang": True}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ticket = agent.followup(text("hang"))
        queued = agent.followup(text("never"))
        await first(agent, "assistant/chunk")
        await agent.dispose()
        await agent.dispose()  # idempotent
        assert (await ticket.wait()).kind == "disposed"
        assert (await queued.wait()).kind == "disposed"
        assert (await agent.followup(text("late")).wait()).kind == "disposed"
        assert ctx.get(AGENTS).get(agent.id) is None
        assert not [t for t in anyio.get_running_tasks() if t.name == "agent s1"]
        assert agent.scope.disposed
    assert kinds(agent)[-1] == "turn/end"
    log = (tmp_path / "sessions" / agent.id / "session.jsonl").read_text().splitlines()
    assert json.loads(log[-1])["data"]["reason"] == {"kind": "disposed"}


async def test_shutdown_disposes_every_agent_and_flushes_its_log(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"hang": True}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        agent.followup(text("hang"))
        await first(agent, "assistant/chunk")
    log = (tmp_path / "sessions" / agent.id / "session.jsonl").read_text().splitlines()
    assert json.loads(log[-1])["type"] == "turn/end"


async def test_a_failing_setup_leaves_nothing_registered(scripted: Callable[..., Context], tmp_path: Path) -> None:
    from acp_agent.agent.prompt import Section
    from acp_agent.tools.bash import BashTool

    ctx = scripted([])

    def setup(agent: Agent) -> None:
        ctx.get(TOOLS).register(BashTool(), owner=agent.scope)  # shadows the global bash for this agent
        ctx.get(PROMPT).add(Section(order=5, name="extra", text="x"), owner=agent.scope)
        raise RuntimeError("setup failed")

    async with ctx.running():
        with pytest.raises(RuntimeError, match="setup failed"):
            await ctx.get(AGENTS).create(cwd=str(tmp_path), setup=setup)
        assert list(ctx.get(AGENTS)) == []
        assert len(ctx.get(TOOLS).visible(None)) == 1
        assert [s.name for s in ctx.get(PROMPT).sections(None)] == ["persona"]
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())


async def test_async_setup_runs_before_publication(scripted: Callable[..., Context], tmp_path: Path) -> None:
    from acp_agent.agent.prompt import Section

    ctx = scripted([])
    seen: list[bool] = []

    async def setup(agent: Agent) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(ctx.get(AGENTS).get(agent.id) is None)
        ctx.get(PROMPT).add(Section(order=0, name="persona", text="a child persona"), owner=agent.scope)

    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path), setup=setup)
        assert seen == [True]
        assert [s.text for s in ctx.get(PROMPT).sections(agent.scope)] == ["a child persona"]
        await agent.dispose()
        assert [s.name for s in ctx.get(PROMPT).sections(None)] == ["persona"]


async def test_a_model_that_reports_aborted_ends_the_turn_aborted(
    tmp_path: Path, replayed: Callable[[Path], Context]
) -> None:
    fixtures = tmp_path / "fx"
    fixtures.mkdir()
    (fixtures / "session.jsonl").write_text(
        json.dumps({"type": "session", "version": 0, "id": "x", "createdAt": 0}) + "\n"
    )
    finish = {"type": "finish", "reason": {"kind": "aborted", "message": "upstream gave up"}}
    (fixtures / "replay.override.json").write_text(json.dumps([{"kind": "chunks", "chunks": [finish]}]))
    ctx = replayed(fixtures)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        reason = await agent.followup(text("x")).wait()
    assert reason.dump() == {"kind": "aborted", "reason": "upstream gave up"}


async def test_cancelling_an_idle_agent_does_nothing(scripted: Callable[..., Context], tmp_path: Path) -> None:
    ctx = scripted([{"text": "ok"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        agent.cancel("nothing runs")
        assert (await agent.followup(text("x")).wait()).kind == "completed"


async def test_an_idle_agent_holds_no_ticket_of_its_last_turn_and_runs_no_task(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"text": "done"}, {"text": "again"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert not agent.busy and not loops(agent)  # nothing queued yet: no loop
        ticket = agent.followup(text("go"))
        assert agent.busy
        assert (await ticket.wait()).kind == "completed"
        await agent.when_idle()
        await anyio.sleep(0)  # the loop's task ends right after the agent is idle
        assert not agent.busy and not loops(agent)
        held = weakref.ref(ticket)
        gc.disable()  # reference counting alone: anything still holding the ticket would keep it
        try:
            del ticket
            assert held() is None
        finally:
            gc.enable()
        assert (await agent.followup(text("more")).wait()).kind == "completed"  # a new loop runs it
    assert [m.content[0].text for m in agent.conversation.messages() if m.role == "assistant"] == ["done", "again"]


def loops(agent: Agent) -> list[str]:
    return [task.name for task in anyio.get_running_tasks() if task.name == f"agent {agent.route}"]


async def test_a_synchronous_setup_and_a_child_route(scripted: Callable[..., Context], tmp_path: Path) -> None:
    ctx = scripted({"s1/call_1": [{"text": "from the child"}]})
    calls: list[str] = []
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(
            cwd=str(tmp_path), route="s1/call_1", setup=lambda a: calls.append(a.route)
        )
        assert (await agent.followup(text("x")).wait()).kind == "completed"
    assert calls == ["s1/call_1"]
    assert agent.session.header.route == "s1/call_1"


async def test_a_cancel_keeps_the_results_already_in(scripted: Callable[..., Context], tmp_path: Path) -> None:
    calls = [
        {"id": "quick", "name": "bash", "arguments": {"command": "echo first", "description": "d"}},
        {"id": "slow", "name": "bash", "arguments": {"command": "sleep 30", "description": "d"}},
    ]
    ctx = scripted([{"toolCalls": calls}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ticket = agent.followup(text("go"))
        await first(agent, "tool/result")
        agent.cancel()
        assert (await ticket.wait()).kind == "aborted"
    results = of_type(agent, "tool/result")
    assert [(r.call_id, r.is_error) for r in results] == [("quick", False), ("slow", True)]
    assert results[0].content[0].text == "first\n"


async def test_a_cancel_before_the_turn_starts_ends_that_turn_aborted(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"text": "never asked"}, {"text": "later"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        ticket = agent.followup(text("queued"))
        agent.cancel("cancelled early")  # the loop has not claimed the message yet
        assert (await ticket.wait()).dump() == {"kind": "aborted", "reason": "cancelled early"}
        assert kinds(agent) == ["turn/start", "user/message", "turn/end"]
        assert (await agent.followup(text("next")).wait()).kind == "completed"
        [message] = of_type(agent, "assistant/message")
        assert message.content[0].text == "never asked"  # the cancelled turn asked the model nothing


async def test_queued_messages_run_in_order_after_the_running_turn(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        tickets = [agent.followup(text(t)) for t in ("a", "b", "c")]
        assert [(await t.wait()).kind for t in tickets] == ["completed"] * 3
    messages = [m.content[0].text for m in of_type(agent, "user/message")]
    answers = [m.content[0].text for m in of_type(agent, "assistant/message")]
    assert (messages, answers) == (["a", "b", "c"], ["one", "two", "three"])


async def test_a_cancel_ends_the_running_turn_and_those_queued_before_it(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"hang": True}, {"text": "after the cancel"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        running = agent.followup(text("a"))
        await first(agent, "assistant/chunk", "text-delta")
        queued = agent.followup(text("b"))
        agent.cancel("stop")
        agent.cancel("a second cancel")  # the first one ended these turns
        later = agent.followup(text("c"))
        assert (await running.wait()).dump() == {"kind": "aborted", "reason": "stop"}
        assert (await queued.wait()).dump() == {"kind": "aborted", "reason": "stop"}
        assert (await later.wait()).kind == "completed"
    assert [m.content[0].text for m in of_type(agent, "user/message")] == ["a", "b", "c"]
    assert [m.content[0].text for m in of_type(agent, "assistant/message")] == ["partial", "after the cancel"]


async def test_a_held_turn_keeps_the_next_one_waiting_until_released(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = scripted([{"text": "one"}, {"text": "two"}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        held = agent.followup(text("a"), hold=True)
        after = agent.followup(text("b"))
        await held.wait()
        await anyio.wait_all_tasks_blocked()
        assert of_type(agent, "turn/end") and len(of_type(agent, "turn/start")) == 1
        held.release()
        assert (await after.wait()).kind == "completed"


async def test_the_same_call_step_after_step_gets_a_note_at_the_third_and_a_firmer_one_at_the_fifth(
    scripted: Callable[..., Context], tmp_path: Path
) -> None:
    same = {"name": "bash", "arguments": {"command": "echo same", "description": "d"}}
    respaced = {"name": "bash", "arguments": {"description": "d", "command": "echo same"}}  # same JSON, other order
    other = {"name": "bash", "arguments": {"command": "echo other"}}
    steps = [same, respaced, same, same, same, other, same, same]
    script = [{"toolCalls": [{"id": f"c{n}", **call}]} for n, call in enumerate(steps)]
    ctx = scripted([*script, {"text": "done"}])
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(workspace))
        await agent.followup(text("go")).wait()
    notes = [[block.text for block in result.content[1:]] for result in of_type(agent, "tool/result")]
    assert notes == [
        [],
        [],
        [tool_texts.repeated_call(3)],
        [tool_texts.repeated_call(4)],
        [tool_texts.repeated_call(5)],
        [],
        [],
        [],
    ]
    assert tool_texts.repeated_call(4) == tool_texts.repeated_call(3).replace("3", "4")  # type: ignore[union-attr]
    assert "Stop repeating it" in tool_texts.repeated_call(5)  # type: ignore[operator]


async def test_an_empty_answer_is_asked_again_at_most_twice_each_retry_logged(tmp_path: Path) -> None:
    ctx, requests = spied(tmp_path, [{}, {}, {"text": "there"}, {}, {}, {}])
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup(text("hi")).wait()
        await agent.followup(text("again")).wait()
    assert len(requests) == 6
    retries = [e.data for e in agent.session.events if e.type == "llm/retry"]
    assert [(r.code, r.attempt, r.attempts, r.message) for r in retries] == [
        ("EMPTY_ANSWER", 1, 3, "the model answered nothing"),
        ("EMPTY_ANSWER", 2, 3, "the model answered nothing"),
        ("EMPTY_ANSWER", 1, 3, "the model answered nothing"),
        ("EMPTY_ANSWER", 2, 3, "the model answered nothing"),
    ]
    messages = [e.data.content for e in agent.session.events if e.type == "assistant/message"]
    assert [[b.text for b in content] for content in messages] == [["there"], []]  # one message a step
    ends = [e.data.reason.kind for e in agent.session.events if e.type == "turn/end"]
    assert ends == ["completed", "completed"]  # after three empty calls the turn ends as before
