"""`ctx.get(SUBAGENTS)`: named providers that start child agents, and what a request asks of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from acp_agent.kernel.context import ServiceKey
from acp_agent.kernel.scope import Disposer
from acp_agent.session.events import TurnEndReason
from acp_agent.subagents.errors import DuplicateProvider, MissingCapability, UnknownProvider

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent
    from acp_agent.agent.options import AgentOptions


class Capabilities(NamedTuple):
    """What a provider can honour beyond a plain prompt."""

    output_schema: bool = False
    depth_limit: bool = False
    tool_filter: bool = False


class SubagentRequest(NamedTuple):
    """One delegation. Cancelling the task that awaits the run cancels the child."""

    parent: Agent
    prompt: str
    description: str = ""
    spawn_call_id: str | None = None
    """The parent's tool call that asks for the child (the child's route ends with it)."""
    output_schema: dict[str, Any] | None = None
    max_depth: int | None = None
    tool_filter: tuple[str, ...] | None = None
    """The only tool names the child may call (its `structured_output` tool is always allowed)."""
    persona: str | None = None
    agent_options: AgentOptions | None = None
    """The child's provider, model, token cap and step cap (default: the parent's)."""
    background: bool = False
    """The child runs on after the call that started it answered (it gets the `report` tool)."""


class SubagentResult(NamedTuple):
    """How the child's run ended, and what it produced (its own output, never its seed's)."""

    reason: TurnEndReason
    output: str | None = None
    structured: Any = None
    captured: bool = False


class SubagentRun(Protocol):
    """A started child. The caller owns it: `result()` waits for the child's turn to end,
    `dispose()` stops it and waits until nothing of it runs."""

    async def result(self) -> SubagentResult: ...

    async def dispose(self) -> None: ...


class SubagentProvider(Protocol):
    name: str
    capabilities: Capabilities

    async def start(self, request: SubagentRequest) -> SubagentRun: ...


# (request field that needs it, capability field, the capability's name in messages)
_NEEDS = (
    ("output_schema", "output_schema", "outputSchema"),
    ("max_depth", "depth_limit", "depthLimit"),
    ("tool_filter", "tool_filter", "toolFilter"),
)


class SubagentRegistry:
    """Providers by name. `start` refuses, before anything starts, a request its provider
    cannot honour, naming the provider and the capability."""

    def __init__(self) -> None:
        self._providers: dict[str, SubagentProvider] = {}

    def register(self, provider: SubagentProvider) -> Disposer:
        if provider.name in self._providers:
            raise DuplicateProvider(f"a subagent provider named {provider.name!r} is already registered")
        self._providers[provider.name] = provider

        def unregister() -> None:
            if self._providers.get(provider.name) is provider:
                del self._providers[provider.name]

        return unregister

    def get(self, name: str) -> SubagentProvider:
        provider = self._providers.get(name)
        if provider is None:
            raise UnknownProvider(
                f"no subagent provider named {name!r}; known: {', '.join(sorted(self._providers)) or 'none'}"
            )
        return provider

    async def start(self, name: str, request: SubagentRequest) -> SubagentRun:
        provider = self.get(name)
        for needed_by, capability, label in _NEEDS:
            if getattr(request, needed_by) is not None and not getattr(provider.capabilities, capability):
                raise MissingCapability(name, label)
        return await provider.start(request)


SUBAGENTS: Final = ServiceKey[SubagentRegistry]("subagents")
"""`ctx.get(SUBAGENTS)`: The subagent providers."""
