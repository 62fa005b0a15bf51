"""`ctx.get(SUBAGENTS)`: named providers, and requests refused before anything starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from acp_agent.agent.keys import AGENTS
from acp_agent.subagents import (
    Capabilities,
    DuplicateProvider,
    MissingCapability,
    SubagentRegistry,
    SubagentRequest,
    UnknownProvider,
)
from acp_agent.subagents import tool as tool_plugin
from acp_agent.subagents.driver import InProcessProvider
from acp_agent.subagents.fork import completed_turns
from acp_agent.subagents.registry import SUBAGENTS
from tests.unit.subagents.conftest import Harness, delegate, of_type, results, text

pytestmark = pytest.mark.anyio

ALL = Capabilities(output_schema=True, depth_limit=True, tool_filter=True)


class Lacking:
    """A provider without one capability; it must never be asked to start anything."""

    def __init__(self, name: str, capabilities: Capabilities) -> None:
        self.name = name
        self.capabilities = capabilities
        self.started: list[SubagentRequest] = []

    async def start(self, request: SubagentRequest) -> Any:
        self.started.append(request)
        raise AssertionError("a request this provider cannot honour reached it")


def test_the_in_process_provider_declares_every_capability() -> None:
    assert InProcessProvider("spawn").capabilities == ALL


def test_a_second_provider_under_a_taken_name_is_refused() -> None:
    registry = SubagentRegistry()
    unregister = registry.register(InProcessProvider("spawn"))
    with pytest.raises(DuplicateProvider, match="a subagent provider named 'spawn' is already registered"):
        registry.register(InProcessProvider("spawn", seed=completed_turns))
    unregister()
    replacement = InProcessProvider("spawn", seed=completed_turns)
    registry.register(replacement)
    unregister()  # a stale disposer leaves the provider registered since alone
    assert registry.get("spawn") is replacement


def test_an_unknown_provider_is_named_with_the_known_ones() -> None:
    registry = SubagentRegistry()
    with pytest.raises(UnknownProvider, match="^no subagent provider named 'x'; known: none$"):
        registry.get("x")
    registry.register(InProcessProvider("fork", seed=completed_turns))
    registry.register(InProcessProvider("spawn"))
    with pytest.raises(UnknownProvider, match="^no subagent provider named 'x'; known: fork, spawn$"):
        registry.get("x")


async def test_the_composed_registry_holds_spawn_and_fork(harness: Callable[..., Harness]) -> None:
    h = harness([])
    spawn, fork = h.ctx.get(SUBAGENTS).get("spawn"), h.ctx.get(SUBAGENTS).get("fork")
    assert isinstance(spawn, InProcessProvider) and spawn.seed is None
    assert isinstance(fork, InProcessProvider) and fork.seed is completed_turns
    with pytest.raises(DuplicateProvider):
        h.ctx.get(SUBAGENTS).register(InProcessProvider("spawn"))
    async with h.ctx.running():
        parent = await h.parent()
        with pytest.raises(UnknownProvider, match="no subagent provider named 'nope'; known: fork, spawn"):
            await h.ctx.get(SUBAGENTS).start("nope", SubagentRequest(parent=parent, prompt="x"))
        assert list(h.ctx.get(AGENTS)) == [parent]


SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


@pytest.mark.parametrize(
    ("capability", "missing", "asks"),
    [
        ("outputSchema", Capabilities(depth_limit=True, tool_filter=True), {"output_schema": SCHEMA}),
        ("depthLimit", Capabilities(output_schema=True, tool_filter=True), {"max_depth": 3}),
        ("toolFilter", Capabilities(output_schema=True, depth_limit=True), {"tool_filter": ("bash",)}),
    ],
)
async def test_a_request_needing_a_missing_capability_fails_before_anything_starts(
    capability: str, missing: Capabilities, asks: dict[str, Any], harness: Callable[..., Harness]
) -> None:
    h = harness([])
    lacking = Lacking("lame", missing)
    h.ctx.get(SUBAGENTS).register(lacking)
    async with h.ctx.running():
        parent = await h.parent()
        with pytest.raises(MissingCapability) as raised:
            await h.ctx.get(SUBAGENTS).start("lame", SubagentRequest(parent=parent, prompt="x", **asks))
        assert str(raised.value) == f"subagent provider 'lame' does not support {capability}"
        assert (raised.value.provider, raised.value.capability) == ("lame", capability)
        assert lacking.started == []
        assert list(h.ctx.get(AGENTS)) == [parent]
    assert h.published == [parent]


async def test_a_request_the_provider_can_honour_reaches_it(harness: Callable[..., Harness]) -> None:
    """Only what a request asks for is checked: a bare prompt needs no capability."""
    h = harness([])
    lacking = Lacking("lame", Capabilities())
    h.ctx.get(SUBAGENTS).register(lacking)
    async with h.ctx.running():
        parent = await h.parent()
        with pytest.raises(AssertionError, match="reached it"):
            await h.ctx.get(SUBAGENTS).start("lame", SubagentRequest(parent=parent, prompt="x"))
    assert len(lacking.started) == 1


async def test_the_tool_reports_a_missing_capability_to_the_parent_model(harness: Callable[..., Harness]) -> None:
    h = harness({"s1": [{"toolCalls": [delegate("a", "x", tool="lame_agent")]}, {"text": "ok"}]})
    lacking = Lacking("lame", Capabilities(output_schema=True, tool_filter=True))
    h.ctx.get(SUBAGENTS).register(lacking)
    tool_plugin.apply(h.ctx, tool_plugin.Config(tool_name="lame_agent", provider="lame"))  # maxDepth 2 by default
    async with h.ctx.running():
        parent = await h.parent()
        assert (await parent.followup(text("go")).wait()).kind == "completed"
    assert results(parent) == ["Error: subagent provider 'lame' does not support depthLimit"]
    [result] = of_type(parent, "tool/result")
    assert result.is_error and result.error.code == "subagent_not_started"
    assert lacking.started == [] and h.published == [parent]
