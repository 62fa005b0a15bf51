from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

import anyio
import pytest
from pydantic import BaseModel

from acp_agent.kernel.scope import Scope
from acp_agent.session.content import ToolCallBlock
from acp_agent.tools import (
    PreparedCall,
    Tool,
    ToolCallContext,
    ToolRegistry,
    ToolResult,
    prepare,
    run_prepared,
)

from .helpers import EchoParams, EchoTool, call_context


def block(name: str, arguments: object = None, call_id: str = "call_1") -> ToolCallBlock:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolCallBlock(id=call_id, name=name, arguments=raw)


def text(result: ToolResult) -> str:
    return result.plain_text()


class NoParams(BaseModel):
    pass


class FuncTool(Tool[NoParams]):
    """A tool whose body is an async function given by the test."""

    description = "test tool"
    Params = NoParams

    def __init__(
        self,
        name: str,
        body: Callable[[ToolCallContext], Awaitable[ToolResult]],
        *,
        concurrency_safe: bool = False,
    ) -> None:
        self.name = name
        self.body = body
        self.concurrency_safe = concurrency_safe

    async def run(self, params: NoParams, call: ToolCallContext) -> ToolResult:
        return await self.body(call)


async def run_all(registry: ToolRegistry, *calls: ToolCallBlock) -> list[ToolResult]:
    prepared = [prepare(call, registry, None) for call in calls]
    return await run_prepared(prepared, call_context)


# --- prepare --------------------------------------------------------------------------------


def test_prepare_resolves_and_validates() -> None:
    registry = ToolRegistry()
    tool = EchoTool()
    registry.register(tool)
    call = block("echo", {"text": "hi"})
    assert prepare(call, registry, None) == PreparedCall(call, tool, EchoParams(text="hi"), None)


def test_unknown_tool() -> None:
    prepared = prepare(block("nope"), ToolRegistry(), None)
    assert prepared.tool is None and prepared.params is None
    assert prepared.error is not None
    assert prepared.error.is_error
    assert text(prepared.error) == "Error: unknown tool 'nope'"
    assert prepared.error.error is not None and prepared.error.error.code == "unknown_tool"


def test_a_withheld_tool_answers_its_note_until_the_note_is_disposed() -> None:
    registry = ToolRegistry()
    owner = Scope()
    registry.register(EchoTool("ask"), owner=owner)
    dispose = registry.withhold("ask", "not for you: answer instead")
    assert prepare(block("ask", {"text": "hi"}), registry, owner).error is None  # who has it calls it
    prepared = prepare(block("ask"), registry, Scope())
    assert prepared.error is not None and text(prepared.error) == "Error: not for you: answer instead"
    assert prepared.error.error is not None and prepared.error.error.code == "unknown_tool"
    dispose()
    forgotten = prepare(block("ask"), registry, Scope()).error
    assert forgotten is not None and text(forgotten) == "Error: unknown tool 'ask'"


def test_tool_of_another_scope_or_filtered_out_is_unknown() -> None:
    registry = ToolRegistry()
    owner = Scope()
    registry.register(EchoTool("mine"), owner=owner)
    registry.register(EchoTool("hidden"))
    registry.restrict(owner, lambda name: name != "hidden")
    assert prepare(block("mine", {"text": "x"}), registry, owner).error is None
    for name, scope in (("mine", None), ("mine", Scope()), ("hidden", owner)):
        error = prepare(block(name, {"text": "x"}), registry, scope).error
        assert error is not None and text(error) == f"Error: unknown tool '{name}'"


def test_invalid_json() -> None:
    registry = ToolRegistry()
    tool = EchoTool()
    registry.register(tool)
    prepared = prepare(block("echo", '{"text": '), registry, None)
    assert prepared.tool is tool  # still known, so the editor can show the call
    assert prepared.params is None and prepared.error is not None
    assert text(prepared.error) == (
        "Error: invalid JSON arguments for 'echo': Expecting value: line 1 column 10 (char 9)"
    )
    assert prepared.error.error is not None and prepared.error.error.code == "invalid_json"


def test_schema_invalid_arguments() -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    prepared = prepare(block("echo", {"text": 3, "extra": 1}), registry, None)
    assert prepared.error is not None
    assert text(prepared.error) == ("Error: invalid arguments for 'echo': text: Input should be a valid string")
    assert prepared.error.error is not None and prepared.error.error.code == "invalid_arguments"
    missing = prepare(block("echo", {}), registry, None).error
    assert missing is not None
    assert text(missing) == "Error: invalid arguments for 'echo': text: Field required"


def test_arguments_that_are_not_an_object() -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    error = prepare(block("echo", "[1]"), registry, None).error
    assert error is not None
    assert text(error) == (
        "Error: invalid arguments for 'echo': Input should be a valid dictionary or instance of EchoParams"
    )


def test_empty_arguments_mean_no_arguments() -> None:
    async def body(call: ToolCallContext) -> ToolResult:
        return ToolResult.text("ok")

    registry = ToolRegistry()
    registry.register(FuncTool("noargs", body))
    assert prepare(block("noargs", ""), registry, None).params == NoParams()
    assert prepare(block("noargs", "  "), registry, None).params == NoParams()


# --- run_prepared ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_errors_become_results_and_valid_calls_run() -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    results = await run_all(
        registry,
        block("nope", call_id="c1"),
        block("echo", {"text": "a"}, call_id="c2"),
        block("echo", "{", call_id="c3"),
    )
    assert [r.is_error for r in results] == [True, False, True]
    assert text(results[0]) == "Error: unknown tool 'nope'"
    assert text(results[1]) == "c2: a"  # the context is made for the call's id
    assert text(results[2]).startswith("Error: invalid JSON arguments for 'echo': ")


@pytest.mark.anyio
async def test_concurrency_safe_calls_run_in_parallel_and_results_keep_model_order() -> None:
    first_started, second_started = anyio.Event(), anyio.Event()

    async def first(call: ToolCallContext) -> ToolResult:
        first_started.set()
        await second_started.wait()  # deadlocks unless the second runs at the same time
        await anyio.sleep(0.01)  # finish last, so completion order differs from model order
        return ToolResult.text("first")

    async def second(call: ToolCallContext) -> ToolResult:
        second_started.set()
        await first_started.wait()
        return ToolResult.text("second")

    registry = ToolRegistry()
    registry.register(FuncTool("first", first, concurrency_safe=True))
    registry.register(FuncTool("second", second, concurrency_safe=True))
    registry.register(EchoTool())
    with anyio.fail_after(2):
        # The unknown call in between does not split the parallel run.
        results = await run_all(registry, block("first"), block("nope"), block("second"))
    assert [text(r) for r in results] == ["first", "Error: unknown tool 'nope'", "second"]


@pytest.mark.anyio
async def test_a_call_that_is_not_concurrency_safe_runs_alone() -> None:
    log: list[str] = []

    def tool(name: str, safe: bool) -> FuncTool:
        async def body(call: ToolCallContext) -> ToolResult:
            log.append(f"start {name}")
            for _ in range(5):  # give any overlapping call the chance to interleave
                await anyio.sleep(0)
            log.append(f"end {name}")
            return ToolResult.text(name)

        return FuncTool(name, body, concurrency_safe=safe)

    registry = ToolRegistry()
    for name, safe in (("s1", True), ("s2", True), ("u", False), ("s3", True), ("u2", False)):
        registry.register(tool(name, safe))
    results = await run_all(registry, block("s1"), block("s2"), block("u"), block("s3"), block("u2"))
    assert [text(r) for r in results] == ["s1", "s2", "u", "s3", "u2"]
    assert log[:4] == ["start s1", "start s2", "end s1", "end s2"]  # safe pair overlapped
    assert log[4:] == ["start u", "end u", "start s3", "end s3", "start u2", "end u2"]


@pytest.mark.anyio
async def test_tool_exception_becomes_error_result_and_others_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(call: ToolCallContext) -> ToolResult:
        raise RuntimeError("disk on fire")

    async def silent(call: ToolCallContext) -> ToolResult:
        raise KeyError

    registry = ToolRegistry()
    registry.register(FuncTool("broken", broken, concurrency_safe=True))
    registry.register(FuncTool("silent", silent))
    registry.register(EchoTool())
    with caplog.at_level(logging.WARNING, logger="acp_agent.tools.pipeline"):
        results = await run_all(registry, block("broken"), block("silent"), block("echo", {"text": "after"}))
    assert text(results[0]) == "Error: disk on fire"
    assert results[0].is_error
    assert results[0].error is not None and results[0].error.code == "tool_failed"
    assert text(results[1]) == "Error: KeyError"  # an exception without a message is named
    assert text(results[2]) == "call_1: after"
    assert "tool 'broken' failed" in caplog.text


@pytest.mark.anyio
@pytest.mark.parametrize("safe", [True, False])
async def test_cancellation_propagates(safe: bool) -> None:
    started = anyio.Event()
    finished: list[str] = []

    async def hang(call: ToolCallContext) -> ToolResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def later(call: ToolCallContext) -> ToolResult:
        finished.append("later")
        return ToolResult.text("later")

    registry = ToolRegistry()
    registry.register(FuncTool("hang", hang, concurrency_safe=safe))
    registry.register(FuncTool("later", later, concurrency_safe=safe))
    reached_end = False
    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:

            async def turn() -> None:
                nonlocal reached_end
                await run_all(registry, block("hang"), block("later"))
                reached_end = True

            tg.start_soon(turn)
            await started.wait()
            tg.cancel_scope.cancel()
    assert not reached_end  # not swallowed into an error result
    if not safe:
        assert finished == []  # the sequential rest of the step does not run


@pytest.mark.anyio
async def test_results_are_reported_in_model_order_as_soon_as_they_are_final() -> None:
    release_first = anyio.Event()
    reported: list[tuple[int, str]] = []

    async def slow(call: ToolCallContext) -> ToolResult:
        await release_first.wait()
        return ToolResult.text("slow")

    async def fast(call: ToolCallContext) -> ToolResult:
        return ToolResult.text("fast")

    registry = ToolRegistry()
    registry.register(FuncTool("slow", slow, concurrency_safe=True))
    registry.register(FuncTool("fast", fast, concurrency_safe=True))
    prepared = [prepare(block(name), registry, None) for name in ("slow", "fast")]

    async def release() -> None:
        await anyio.sleep(0.05)
        assert reported == []  # "fast" is done but waits behind "slow"
        release_first.set()

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(release)
            await run_prepared(prepared, call_context, on_result=lambda i, r: reported.append((i, text(r))))
    assert reported == [(0, "slow"), (1, "fast")]


@pytest.mark.anyio
async def test_a_gate_may_answer_a_call_just_before_it_runs() -> None:
    closed: list[str] = []
    seen: list[tuple[str, str]] = []
    registry = ToolRegistry()
    registry.register(EchoTool())

    async def gate(call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
        seen.append((call.block.id, context.call_id))
        return (
            ToolResult.failure(f"the run is complete, so `{call.block.name}` is not executed", "refused")
            if closed
            else None
        )

    registry.gate(None, gate)
    prepared = [prepare(block("echo", {"text": t}, call_id=t), registry, None) for t in ("a", "b")]
    prepared.append(prepare(block("nope", call_id="c"), registry, None))  # not asked: it cannot run
    results = await run_prepared(
        prepared, call_context, on_result=lambda i, r: closed.append("x"), gate=registry.gates(None)
    )
    assert [text(r) for r in results] == [
        "a: a",
        "Error: the run is complete, so `echo` is not executed",
        "Error: unknown tool 'nope'",
    ]
    assert results[1].error is not None and results[1].error.code == "refused"
    assert seen == [("a", "a"), ("b", "b")]


@pytest.mark.anyio
async def test_an_owners_gates_come_before_the_global_ones_and_the_first_answer_wins() -> None:
    asked: list[str] = []
    registry = ToolRegistry()
    owner, other = Scope(), Scope()

    def gate(name: str, answer: str | None) -> Callable[[PreparedCall, ToolCallContext], Awaitable[ToolResult | None]]:
        async def ask(call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
            asked.append(name)
            return ToolResult.text(answer) if answer is not None else None

        return ask

    registry.gate(None, gate("global", "from global"))
    registry.gate(owner, gate("own-pass", None))
    lift = registry.gate(owner, gate("own", "from own"))
    registry.gate(other, gate("other", "never"))
    call = prepare(block("echo", {"text": "x"}), ToolRegistry(), None)
    context = call_context("call_1")
    assert await registry.gates(owner)(call, context) == ToolResult.text("from own")
    assert asked == ["own-pass", "own"]
    lift()
    lift()
    assert await registry.gates(owner)(call, context) == ToolResult.text("from global")
    assert await registry.gates(None)(call, context) == ToolResult.text("from global")
    owner.dispose()
    other.dispose()
    assert asked == ["own-pass", "own", "own-pass", "global", "global"]
    assert await ToolRegistry().gates(owner)(call, context) is None


@pytest.mark.anyio
async def test_a_failing_gate_fails_the_call_without_running_it(caplog: pytest.LogCaptureFixture) -> None:
    ran: list[str] = []
    registry = ToolRegistry()

    async def body(call: ToolCallContext) -> ToolResult:
        ran.append(call.call_id)
        return ToolResult.text("ran")

    registry.register(FuncTool("t", body))

    async def broken(call: PreparedCall, context: ToolCallContext) -> ToolResult | None:
        raise RuntimeError("the gate broke")

    with caplog.at_level(logging.WARNING):
        [result] = await run_prepared([prepare(block("t"), registry, None)], call_context, gate=broken)
    assert text(result) == "Error: the gate broke" and result.error is not None and result.error.code == "tool_failed"
    assert ran == []
