"""Context: named services, and `running()` with its task group, shutdown and disposal."""

from __future__ import annotations

import copy

import anyio
import pytest

from acp_agent.kernel import (
    SHUTDOWN,
    Context,
    KernelError,
    ServiceConflict,
    ServiceKey,
    ServiceNotFound,
)

NAMES = ServiceKey[list[str]]("names")
COUNT = ServiceKey[int]("count")


def test_a_provided_service_is_reachable_by_its_key() -> None:
    ctx = Context()
    names = ["a"]
    ctx.provide(NAMES, names)
    assert ctx.has(NAMES) and ctx.has("names")  # the loader's `inject` asks by name
    assert ctx.get(NAMES) is names
    assert ctx.find(NAMES) is names
    assert repr(NAMES) == "ServiceKey('names')"


def test_providing_a_taken_name_is_a_conflict() -> None:
    ctx = Context()
    ctx.provide(COUNT, 1)
    with pytest.raises(ServiceConflict, match="^service 'count' is already provided$"):
        ctx.provide(ServiceKey[str]("count"), "second")  # another key of the same name
    assert ctx.get(COUNT) == 1


def test_the_disposer_withdraws_the_service_and_frees_the_name() -> None:
    ctx = Context()
    dispose = ctx.provide(COUNT, 1)
    dispose()
    assert not ctx.has(COUNT)
    ctx.provide(COUNT, 2)
    assert ctx.get(COUNT) == 2


def test_a_stale_disposer_does_not_withdraw_a_later_provider() -> None:
    ctx = Context()
    service = ["same"]
    first = ctx.provide(NAMES, service)
    first()
    ctx.provide(NAMES, service)  # the same object again, by a new provider
    first()
    assert ctx.get(NAMES) is service


def test_a_missing_service_is_service_not_found_and_find_gives_none() -> None:
    ctx = Context()
    with pytest.raises(ServiceNotFound, match="^no service named 'names' is provided$") as caught:
        ctx.get(NAMES)
    assert caught.value.name == "names"
    assert isinstance(caught.value, KernelError)
    assert ctx.find(NAMES) is None
    assert not ctx.has(NAMES)


def test_services_are_not_attributes() -> None:
    ctx = Context()
    ctx.provide(NAMES, [])
    assert not hasattr(ctx, "names")
    clone = copy.copy(ctx)
    assert clone.events is ctx.events


def test_tasks_outside_running_raises() -> None:
    with pytest.raises(KernelError, match=r"^the context is not running: use `async with ctx.running\(\)`$"):
        _ = Context().tasks


@pytest.mark.anyio
async def test_running_offers_its_task_group_and_yields_the_context() -> None:
    ctx = Context()
    done = anyio.Event()

    async def work() -> None:
        done.set()

    async with ctx.running() as running:
        assert running is ctx
        ctx.tasks.start_soon(work)
        with anyio.fail_after(10):
            await done.wait()
    with pytest.raises(KernelError):
        _ = ctx.tasks


@pytest.mark.anyio
async def test_on_exit_shutdown_runs_first_then_tasks_are_cancelled_then_the_scope_is_disposed() -> None:
    ctx = Context()
    trace: list[str] = []
    started = anyio.Event()

    async def loop() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            trace.append("task cancelled")

    async def flush() -> None:
        await anyio.sleep(0.01)  # a real wait: the listener is awaited, not just called
        trace.append("shutdown")

    ctx.events.on(SHUTDOWN, flush)
    ctx.scope.add(lambda: trace.append("scope disposed"))
    async with ctx.running():
        ctx.tasks.start_soon(loop)
        await started.wait()
    assert trace == ["shutdown", "task cancelled", "scope disposed"]
    assert ctx.scope.disposed


@pytest.mark.anyio
async def test_shutdown_is_awaited_even_when_the_body_is_cancelled() -> None:
    ctx = Context()
    trace: list[str] = []

    async def flush() -> None:
        await anyio.sleep(0.01)  # would be cancelled at once without the shield
        trace.append("shutdown")

    async def loop() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            trace.append("task cancelled")

    ctx.events.on(SHUTDOWN, flush)
    ctx.scope.add(lambda: trace.append("scope disposed"))
    with anyio.fail_after(10):
        with anyio.CancelScope() as outer:
            async with ctx.running():
                ctx.tasks.start_soon(loop)
                await anyio.sleep(0)
                outer.cancel()
                await anyio.sleep_forever()
    assert outer.cancelled_caught
    # The outer cancellation reaches the tasks together with the body, so only the last step
    # is ordered: shutdown was awaited in full and the scope was disposed after it.
    assert sorted(trace[:2]) == ["shutdown", "task cancelled"]
    assert trace[2:] == ["scope disposed"]


@pytest.mark.anyio
async def test_an_error_in_the_body_still_shuts_down_and_surfaces_in_an_exception_group() -> None:
    ctx = Context()
    trace: list[str] = []

    async def flush() -> None:
        trace.append("shutdown")

    ctx.events.on(SHUTDOWN, flush)
    ctx.scope.add(lambda: trace.append("scope disposed"))
    with pytest.raises(ExceptionGroup) as caught:
        async with ctx.running():
            raise ValueError("body broke")
    assert [str(exc) for exc in caught.value.exceptions] == ["body broke"]
    assert trace == ["shutdown", "scope disposed"]
    with pytest.raises(KernelError):
        _ = ctx.tasks
