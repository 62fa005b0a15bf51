"""Events: emit, serial, parallel and waterfall, and listener disposers."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from acp_agent.kernel import EventKey, Events, Next, NoListener

TICK = EventKey[Callable[..., object]]("tick")
OTHER = EventKey[Callable[..., object]]("other")
NOBODY = EventKey[Callable[[], Awaitable[object]]]("nobody")
COMPUTE = EventKey[Callable[[int], Awaitable[int]]]("compute")
MEET = EventKey[Callable[[str], Awaitable[str]]]("meet")
RACE = EventKey[Callable[[], Awaitable[str]]]("race")
BOOM = EventKey[Callable[[], Awaitable[None]]]("boom")
LLM = EventKey[Callable[[Any, Next[Any]], Awaitable[Any]]]("llm")


def test_emit_calls_sync_listeners_in_registration_order_with_the_arguments() -> None:
    events = Events()
    calls: list[tuple[str, tuple[Any, ...]]] = []
    events.on(TICK, lambda *args: calls.append(("first", args)))
    events.on(TICK, lambda *args: calls.append(("second", args)))
    events.on(OTHER, lambda *args: calls.append(("other", args)))
    events.emit(TICK, 1, "two")
    assert calls == [("first", (1, "two")), ("second", (1, "two"))]


def test_keys_of_one_name_are_one_event_and_a_key_shows_its_name() -> None:
    events = Events()
    calls: list[object] = []
    events.on(TICK, calls.append)
    events.emit(EventKey[Callable[[int], object]]("tick"), 1)
    assert calls == [1]
    assert repr(TICK) == "EventKey('tick')"


def test_emit_without_listeners_does_nothing() -> None:
    Events().emit(NOBODY)


def test_a_disposed_listener_is_not_called_and_disposing_twice_is_harmless() -> None:
    events = Events()
    calls: list[str] = []
    dispose = events.on(TICK, lambda: calls.append("gone"))
    events.on(TICK, lambda: calls.append("kept"))
    dispose()
    dispose()
    events.emit(TICK)
    assert calls == ["kept"]


def test_a_disposer_removes_its_own_registration_of_a_listener_registered_twice() -> None:
    events = Events()
    calls: list[str] = []

    def shared() -> None:
        calls.append("shared")

    def other() -> None:
        calls.append("other")

    events.on(TICK, shared)
    events.on(TICK, other)
    second = events.on(TICK, shared)
    second()
    second()  # a stale disposer must not remove the first registration
    assert events.listeners(TICK) == [shared, other]
    events.emit(TICK)
    assert calls == ["shared", "other"]


def test_listeners_is_a_snapshot_so_a_listener_may_unsubscribe_while_it_runs() -> None:
    events = Events()
    calls: list[str] = []
    disposers: list[Callable[[], None]] = []

    def once() -> None:
        calls.append("once")
        disposers[0]()

    disposers.append(events.on(TICK, once))
    events.on(TICK, lambda: calls.append("after"))
    snapshot = events.listeners(TICK)
    events.emit(TICK)
    events.emit(TICK)
    assert calls == ["once", "after", "after"]
    assert len(snapshot) == 2  # the snapshot did not change under the disposal
    assert events.listeners(NOBODY) == []


@pytest.mark.anyio
async def test_serial_awaits_each_listener_in_turn_and_returns_results_in_order() -> None:
    events = Events()
    trace: list[str] = []

    async def slow(value: int) -> int:
        trace.append("slow start")
        await anyio.sleep(0.01)
        trace.append("slow end")
        return value * 2

    async def fast(value: int) -> int:
        trace.append("fast")
        return value + 1

    events.on(COMPUTE, slow)
    events.on(COMPUTE, fast)
    assert await events.serial(COMPUTE, 5) == [10, 6]
    assert trace == ["slow start", "slow end", "fast"]
    assert await events.serial(NOBODY) == []


@pytest.mark.anyio
async def test_parallel_runs_listeners_concurrently() -> None:
    events = Events()
    first_ready, second_ready = anyio.Event(), anyio.Event()

    async def first(tag: str) -> str:
        first_ready.set()
        await second_ready.wait()
        return f"first {tag}"

    async def second(tag: str) -> str:
        second_ready.set()
        await first_ready.wait()
        return f"second {tag}"

    events.on(MEET, first)
    events.on(MEET, second)
    with anyio.fail_after(10):  # run one after the other, each would wait for the other forever
        assert await events.parallel(MEET, "x") == ["first x", "second x"]


@pytest.mark.anyio
async def test_parallel_returns_results_in_registration_order_not_completion_order() -> None:
    events = Events()

    async def late() -> str:
        await anyio.sleep(0.02)
        return "late"

    async def early() -> str:
        return "early"

    events.on(RACE, late)
    events.on(RACE, early)
    assert await events.parallel(RACE) == ["late", "early"]
    assert await events.parallel(NOBODY) == []


@pytest.mark.anyio
async def test_parallel_listener_failure_surfaces_in_an_exception_group() -> None:
    events = Events()

    async def fail() -> None:
        raise ValueError("listener broke")

    events.on(BOOM, fail)
    with pytest.raises(ExceptionGroup) as caught:
        await events.parallel(BOOM)
    assert [str(exc) for exc in caught.value.exceptions] == ["listener broke"]


@pytest.mark.anyio
async def test_waterfall_runs_listeners_as_middleware_in_order() -> None:
    events = Events()
    trace: list[str] = []

    async def outer(prompt: str, next: Next[str]) -> str:
        trace.append(f"outer before {prompt}")
        result = await next()
        trace.append("outer after")
        return f"outer({result})"

    async def inner(prompt: str, next: Next[str]) -> str:
        trace.append(f"inner before {prompt}")
        result = await next()
        trace.append("inner after")
        return f"inner({result})"

    async def model(prompt: str, next: Next[str]) -> str:
        trace.append(f"model {prompt}")
        return "answer"

    events.on(LLM, outer)
    events.on(LLM, inner)
    events.on(LLM, model)
    assert await events.waterfall(LLM, "hi") == "outer(inner(answer))"
    assert trace == ["outer before hi", "inner before hi", "model hi", "inner after", "outer after"]


@pytest.mark.anyio
async def test_a_waterfall_listener_that_does_not_call_next_owns_the_call() -> None:
    events = Events()
    reached: list[str] = []

    async def replay(prompt: str, next: Next[str]) -> str:
        return f"replayed {prompt}"

    async def real(prompt: str, next: Next[str]) -> str:
        reached.append("real")
        return "real"

    events.on(LLM, replay)
    events.on(LLM, real)
    assert await events.waterfall(LLM, "hi") == "replayed hi"
    assert reached == []


@pytest.mark.anyio
async def test_a_waterfall_nobody_owns_raises_no_listener() -> None:
    events = Events()

    async def passing(request: object, next: Next[Any]) -> Any:
        return await next()

    with pytest.raises(NoListener, match="^no listener of 'llm' handled the call$"):
        await events.waterfall(LLM, None)
    events.on(LLM, passing)
    events.on(LLM, passing)
    with pytest.raises(NoListener, match="^no listener of 'llm' handled the call$"):
        await events.waterfall(LLM, None)


@pytest.mark.anyio
async def test_a_waterfall_listener_may_handle_no_listener_from_the_rest() -> None:
    events = Events()

    async def fallback(request: object, next: Next[str]) -> str:
        try:
            return await next()
        except NoListener:
            return "fallback"

    events.on(LLM, fallback)
    assert await events.waterfall(LLM, None) == "fallback"


@pytest.mark.anyio
async def test_a_waterfall_lets_go_of_its_arguments_when_it_returns_without_the_cyclic_collector() -> None:
    class Request:
        pass

    events = Events()

    async def passing(request: Request, next: Next[Any]) -> Any:
        return await next()

    async def owning(request: Request, next: Next[str]) -> str:
        return "owned"

    events.on(LLM, passing)
    events.on(LLM, owning)
    request = Request()
    held = weakref.ref(request)
    gc.disable()  # only reference counting frees the request: a chain in a cycle would keep it
    try:
        assert await events.waterfall(LLM, request) == "owned"
        del request
        assert held() is None
    finally:
        gc.enable()
