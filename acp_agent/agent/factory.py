"""`ctx.get(AGENTS)`: creates agents in a transaction and keeps the published ones."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Final

from acp_agent.agent.agent import Agent
from acp_agent.agent.config import ModelEntry, offered, restored, with_model
from acp_agent.agent.options import AgentOptions
from acp_agent.kernel.events import EventKey
from acp_agent.kernel.models import Model
from acp_agent.kernel.scope import Removal
from acp_agent.session.events import SessionEvent, SessionHeader
from acp_agent.session.log import Session, now_ms
from acp_agent.session.persistence import SESSIONS, LoadedSession
from acp_agent.session.routes import top_level_route

if TYPE_CHECKING:
    from acp_agent.kernel.context import Context


DEFAULT_MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024
PUBLISHED: Final = EventKey[Callable[[Agent], object]]("agent/published")
"""Emitted with the agent when it is published, before its loop starts (observers subscribe here)."""

Setup = Callable[[Agent], Awaitable[None] | None]


class Lineage(Model):
    """Where a child agent comes from; written into its session header."""

    parent_session: str
    delegation_depth: int
    spawn_call_id: str | None = None


class AgentFactory:
    """Creation is a transaction: prepare the session (optionally seeded), run `setup` on the
    unpublished agent, then publish (persist, register, start). A failure or cancellation before
    publication unwinds everything `setup` registered; the caller never holds a half-made agent."""

    def __init__(
        self,
        ctx: Context,
        defaults: AgentOptions,
        models: Sequence[ModelEntry] = (),
        *,
        max_attachment_bytes: int = DEFAULT_MAX_ATTACHMENT_BYTES,
        route_base: str = "",
    ) -> None:
        self._ctx = ctx
        self.route_base = route_base
        """What this process's top-level routes are under (`session.routes.top_level_route`): the
        route of the agent it runs for when it is another's out-of-process child; "" else."""
        self.max_attachment_bytes = max_attachment_bytes
        """The largest image or binary file a prompt may attach (decoded bytes; the agents row's
        `maxAttachmentBytes`): attachments are kept in the session log."""
        self.models = offered(defaults.model, models)
        """The models a session may switch to (`config.choose`), the default among them."""
        self.defaults = with_model(defaults, self.models, defaults.model)
        """Options of a new top-level agent: the default model at its first thought level."""
        self._agents: dict[str, Agent] = {}
        self._top_level = 0

    def __iter__(self) -> Iterator[Agent]:
        return iter(list(self._agents.values()))

    def get(self, session_id: str) -> Agent | None:
        return self._agents.get(session_id)

    def top_level(self, agent: Agent) -> Agent:
        """The top-level agent of `agent`'s thread: itself when it is top-level (or when its
        parent is gone), else its parent's, recursively."""
        while (parent_id := agent.session.header.parent_session) is not None:
            parent = self._agents.get(parent_id)
            if parent is None:
                break
            agent = parent
        return agent

    def next_route(self) -> str:
        """The route of the next top-level session: `s<k>` (under the route base), k-th created in
        this process, skipping a route a live agent holds (a loaded session keeps the route of the
        process that made it)."""
        taken = {agent.route for agent in self._agents.values()}
        while True:
            self._top_level += 1
            route = top_level_route(self._top_level, self.route_base)
            if route not in taken:
                return route

    def _restored(self, header: SessionHeader) -> tuple[SessionHeader, str]:
        """A loaded session's header and route: kept as they were, unless the route is missing or
        held by a live agent (two agents on one route would share a replay cursor); then the
        session takes the next route, written into its header."""
        route = header.route
        if route is None or any(agent.route == route for agent in self._agents.values()):
            route = self.next_route()
            header = header.model_copy(update={"route": route})
        return header, route

    async def create(
        self,
        *,
        cwd: str | None,
        route: str | None = None,
        options: AgentOptions | None = None,
        seed: Sequence[SessionEvent] = (),
        lineage: Lineage | None = None,
        setup: Setup | None = None,
    ) -> Agent:
        """Create and publish a new agent: a top-level one, or a child when `lineage` is given
        (`seed`: the events a child inherits, recorded as its header's `seedLength`)."""
        route = route or self.next_route()
        header = SessionHeader(
            id=str(uuid.uuid4()),
            created_at=now_ms(),
            cwd=cwd,
            route=route,
            **(lineage.model_dump() if lineage is not None else {}),
            seed_length=len(seed) if lineage is not None and seed else None,
        )
        return await self._publish(header, route, seed, options or self.defaults, setup, None)

    async def fork(self, source: SessionHeader, seed: Sequence[SessionEvent], *, cwd: str) -> Agent:
        """Publish a new top-level agent whose history is `seed` (a balanced prefix of `source`'s
        log), shown as its own (no `seedLength`), with `source`'s choices as of that prefix; its
        header names `source` (`forkedFrom`)."""
        route = self.next_route()
        header = SessionHeader(id=str(uuid.uuid4()), created_at=now_ms(), cwd=cwd, route=route, forked_from=source.id)
        options = restored(self.defaults, self.models, seed, source.id)
        return await self._publish(header, route, seed, options, None, None)

    async def restore(self, loaded: LoadedSession, *, options: AgentOptions | None = None) -> Agent:
        """Publish an agent that continues a stored session read back: its header is kept (id,
        cwd, route, ...) and its events are the seed, so turn numbers continue and the model sees
        the history. Attaching it to the store continues its file, which writes a repaired tail
        back."""
        header, route = self._restored(loaded.header)
        options = restored(options or self.defaults, self.models, loaded.events, loaded.header.id)
        return await self._publish(header, route, loaded.events, options, None, loaded)

    async def _publish(
        self,
        header: SessionHeader,
        route: str,
        seed: Sequence[SessionEvent],
        options: AgentOptions,
        setup: Setup | None,
        loaded: LoadedSession | None,
    ) -> Agent:
        """The transaction: a session on `seed`, `setup` on the unpublished agent, then publish
        (the store continues `loaded`'s file, or starts a new one)."""
        ctx = self._ctx
        store = ctx.get(SESSIONS)
        session = Session(
            header, registry=store.registry, seed=seed, state=loaded.state if loaded is not None else None
        )
        scope = ctx.scope.child()
        agent = Agent(ctx, session, options, scope, route)
        try:
            if setup is not None:
                pending = setup(agent)
                if pending is not None:
                    await pending
            scope.add(store.attach(session, loaded=loaded))
            scope.add(agent.conversation.follow())  # after the store: it watches first
            self._agents[agent.id] = agent
            scope.add(Removal(self._agents, agent.id))
            ctx.events.emit(PUBLISHED, agent)  # an observer that raises unwinds the agent too
        except BaseException:
            scope.dispose()
            raise
        agent.start()
        return agent

    async def dispose_all(self) -> None:
        for agent in self:
            await agent.dispose()
