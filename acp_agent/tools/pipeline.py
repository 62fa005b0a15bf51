"""From the model's tool calls to results: resolve and validate, then run in model order.

The agent loop owns the step: it calls `prepare` for every call (so it can log `tool/call` and show
the editor a presentation before anything runs), then `run_prepared` for the whole step.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple

import anyio
from pydantic import BaseModel, ValidationError

from acp_agent.kernel.scope import Scope
from acp_agent.session.content import ArgumentsRefused, ToolCallBlock, parse_arguments
from acp_agent.tools.base import Tool, ToolCallContext, ToolResult
from acp_agent.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)


class PreparedCall(NamedTuple):
    """A call resolved against the registry: `error` is set when it cannot run.

    `tool` is set whenever the name resolved (even with bad arguments, so the editor can still show
    the call); `params` is set exactly when `error` is None.
    """

    block: ToolCallBlock
    tool: Tool[Any] | None
    params: BaseModel | None
    error: ToolResult | None


Gate = Callable[[PreparedCall, ToolCallContext], Awaitable[ToolResult | None]]
"""Asked just before a valid call runs (with the context it would run with): a result answers the
call instead (it does not run), None lets it run. A gate may wait (for the user's approval, say);
while it waits the call has not started."""


def prepare(call: ToolCallBlock, registry: ToolRegistry, owner: Scope | None) -> PreparedCall:
    """Find the tool the agent of scope `owner` may call by `call.name`, validate the arguments."""
    tool = registry.get(call.name, owner)
    if tool is None:
        message = registry.withheld(call.name) or f"unknown tool '{call.name}'"
        return PreparedCall(call, None, None, ToolResult.failure(message, "unknown_tool"))
    try:
        arguments = parse_arguments(call.arguments)
    except ArgumentsRefused as exc:
        message = f"the arguments for '{call.name}' are {exc}: the call did not run; pass smaller arguments"
        return PreparedCall(call, tool, None, ToolResult.failure(message, "arguments_refused"))
    except ValueError as exc:
        message = f"invalid JSON arguments for '{call.name}': {exc}"
        return PreparedCall(call, tool, None, ToolResult.failure(message, "invalid_json"))
    try:
        params = tool.Params.model_validate(arguments)
    except ValidationError as exc:
        message = f"invalid arguments for '{call.name}': {_brief(exc)}"
        return PreparedCall(call, tool, None, ToolResult.failure(message, "invalid_arguments"))
    return PreparedCall(call, tool, params, None)


async def run_prepared(
    prepared: Sequence[PreparedCall],
    make_context: Callable[[str], ToolCallContext],
    *,
    on_result: Callable[[int, ToolResult], None] | None = None,
    gate: Gate | None = None,
) -> list[ToolResult]:
    """Run the calls of one step; results come back in model order.

    Consecutive concurrency-safe calls run together in a task group, any other call runs alone.
    A tool's exception becomes an error result so the turn goes on; cancellation propagates.
    `on_result(index, result)` hears each result, in model order, as soon as it and every earlier
    one are final (so a cancel later in the step loses none of them). `gate` is asked just before
    each valid call would run, in the call's turn (so it sees earlier results of the step, and a
    cancel reaches it), and may answer the call instead (see `Gate`).
    """
    results: dict[int, ToolResult] = {}
    reported = 0

    async def run_at(index: int) -> None:
        nonlocal reported
        results[index] = await _run_one(prepared[index], make_context, gate)
        while reported in results:
            if on_result is not None:
                on_result(reported, results[reported])
            reported += 1

    for batch in _batches(prepared):
        async with anyio.create_task_group() as tg:
            for index in batch:
                tg.start_soon(run_at, index)
    return [results[index] for index in range(len(prepared))]


def _batches(prepared: Sequence[PreparedCall]) -> list[list[int]]:
    """Indices grouped into runs of calls that may overlap; order within and across is kept."""
    batches: list[list[int]] = []
    for index, call in enumerate(prepared):
        if batches and _parallel(call) and _parallel(prepared[batches[-1][-1]]):
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


def _parallel(call: PreparedCall) -> bool:
    # A call that will not run only returns its error, so it can sit in any batch.
    return call.error is not None or (call.tool is not None and call.tool.concurrency_safe)


async def _run_one(call: PreparedCall, make_context: Callable[[str], ToolCallContext], gate: Gate | None) -> ToolResult:
    if call.error is not None:
        return call.error
    assert call.tool is not None and call.params is not None  # prepare() sets both without error
    context = make_context(call.block.id)
    try:
        # A failing gate is a failed call too: the call does not run and the turn goes on.
        answer = await gate(call, context) if gate is not None else None
        return answer if answer is not None else await call.tool.run(call.params, context)
    except Exception as exc:  # cancellation is a BaseException and is not caught
        logger.warning("tool %r failed", call.tool.name, exc_info=True)
        return ToolResult.failure(str(exc) or type(exc).__name__, "tool_failed")


def _brief(exc: ValidationError) -> str:
    """One line per pydantic error, `field.path: message`, joined with '; '."""
    return "; ".join(
        f"{'.'.join(map(str, err['loc']))}: {err['msg']}" if err["loc"] else err["msg"] for err in exc.errors()
    )
