"""The session lifecycle behind the ACP methods: reopening a stored session (its checks, its
agent, its replay), closing, deleting and naming one, the stored sessions' children and listing,
and the per-id turns all of them take. The server's handlers parse and answer; this module
changes what is open and what is stored."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from acp_agent.acp import errors
from acp_agent.acp.connection import Connection
from acp_agent.acp.history import StoredLog, history_updates
from acp_agent.acp.listing import list_page, listed_cwd
from acp_agent.acp.schema import ListSessionsResult
from acp_agent.acp.wire import AcpSession, Wire
from acp_agent.agent.agent import Agent
from acp_agent.agent.factory import AgentFactory
from acp_agent.agent.keys import AGENTS
from acp_agent.kernel.context import Context
from acp_agent.kernel.memory import release_free_memory
from acp_agent.kernel.scope import Disposer
from acp_agent.kernel.tables import take
from acp_agent.mcp.session import MCP
from acp_agent.mcp.session import logged_tools as mcp_logged_tools
from acp_agent.session.errors import (
    InvalidSessionId,
    LogUnwritable,
    MisplacedLog,
    SessionBusy,
    SessionLogDamaged,
    SessionNotFound,
    UnknownEventType,
    UnsupportedVersion,
)
from acp_agent.session.events import SessionEvent, SessionHeader
from acp_agent.session.index import gc_paused
from acp_agent.session.persistence import SESSIONS, LoadedSession, read_events
from acp_agent.session.titles import TitleData, TitleEvent
from acp_agent.tools.base import Tool
from acp_agent.tools.registry import TOOLS

log = logging.getLogger(__name__)

LIST_PAGE_SIZE = 50
"""Sessions per `session/list` page."""
CLOSED_BY_CLIENT = "the client closed the session"


@dataclass(eq=False)
class _Turns:
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    users: int = 0
    """Tasks holding or waiting for `lock`."""


class Lifecycle:
    """What opens, closes, deletes and names the sessions of one connection (`wire`), and reads
    the stored ones back. Every change to one session id happens inside `one_at_a_time(id)`."""

    def __init__(self, ctx: Context, wire: Wire, *, list_page_size: int = LIST_PAGE_SIZE) -> None:
        self.ctx = ctx
        self.wire = wire
        self.list_page_size = list_page_size
        self.turns: dict[str, _Turns] = {}
        """Per session id being opened or closed now: its lock (see `one_at_a_time`)."""

    @asynccontextmanager
    async def one_at_a_time(self, session_id: str) -> AsyncIterator[None]:
        """Opening and closing one session id take turns (a load that closes it first included).
        Its lock is kept only while someone holds it or waits for it: a server that opened and
        closed many sessions keeps nothing of them."""
        turns = self.turns.setdefault(session_id, _Turns())
        turns.users += 1
        try:
            async with turns.lock:
                yield
        finally:
            turns.users -= 1
            if not turns.users:
                take(self.turns, session_id)

    async def reopen(self, session_id: str, cwd: str, *, replay: bool) -> Agent:
        """The stored session's agent, re-created (and replayed on the wire when `replay`); one
        open here already is closed first, so it reopens from what it wrote. Called inside
        `one_at_a_time(session_id)`; the caller shows the agent as a session."""
        if (entry := self.wire.sessions.get(session_id)) is not None:
            await self.close(entry)
        unclaim = await self.claim(session_id)
        try:  # read under the lock, so what another process wrote last is in
            return await self._restore(session_id, cwd, self._read(session_id), replay)
        finally:
            unclaim()  # a no-op once the agent's log took the lock over

    async def close_open(self, session_id: str) -> None:
        """`session/close`: cancel what runs, dispose the agent (its log is flushed and closed),
        forget the session. A request about it read after the close is refused as one to a
        closed session (`Wire.session`), even while the close still waits for the running turn
        to end. Once no session is open, the memory they held is given back to the system
        (`kernel.memory`; README, Performance: memory over 200 sessions)."""
        self._closing(session_id)
        async with self.one_at_a_time(session_id):
            await self.close(self.wire.session(session_id))  # -32002 for an id not open here, -32602 a child's
        if not self.wire.sessions:
            release_free_memory()

    async def close(self, entry: AcpSession) -> None:
        """Close an open session: its running prompt answers `cancelled`, its MCP servers are gone
        and its agent disposed before this returns."""
        agent = entry.agent
        take(self.wire.sessions, agent.id)
        agent.cancel(CLOSED_BY_CLIENT)
        await agent.when_idle()
        if self.ctx.has(MCP):
            await self.ctx.get(MCP).close(agent)
        await agent.dispose()

    async def delete(self, session_id: str) -> None:
        """Close the session if it is open here, then remove its log and its children's
        (`SessionStore.delete`) under its lock: a session another process has open is refused
        with the lock's error, and nothing else on disk is touched."""
        if session_id in self.wire.child_ids:
            raise errors.subagent_session(session_id)
        self._closing(session_id)
        async with self.one_at_a_time(session_id):
            if (entry := self.wire.sessions.get(session_id)) is not None:
                await self.close(entry)
            unclaim = await self.claim(session_id)
            try:
                self.top_level(session_id, "delete")  # a log whose header is damaged can still go
                self.ctx.get(SESSIONS).delete(session_id)
            finally:
                unclaim()

    async def name(self, session_id: str, named: TitleData) -> None:
        """Log a title in a session, open here (its mapper sends the update) or stored (under
        its lock)."""
        if session_id in self.wire.child_ids:
            raise errors.subagent_session(session_id)
        async with self.one_at_a_time(session_id):
            if (entry := self.wire.sessions.get(session_id)) is not None:
                entry.agent.session.append(TitleEvent, named)
                return
            unclaim = await self.claim(session_id)
            try:
                self.top_level(session_id, "name")
                self.ctx.get(SESSIONS).log_stored(session_id, TitleEvent, named)
            except (SessionLogDamaged, UnsupportedVersion) as exc:
                raise errors.internal_error(f"cannot name session {session_id!r}: {exc}") from None
            finally:
                unclaim()

    def page(self, cwd: str | None, cursor: str | None) -> ListSessionsResult:
        """A page of the stored top-level sessions someone prompted, most recently active first;
        `cwd` keeps those of one working directory."""
        with gc_paused():  # thousands of summaries made, sorted and dropped, none in a cycle
            return list_page(self.ctx.get(SESSIONS).summaries(listed_cwd(cwd)), cursor, self.list_page_size)

    async def claim(self, session_id: str) -> Disposer:
        """The stored session's lock (see `SessionStore.claim`); errors as the client should see them."""
        try:
            return await self.ctx.get(SESSIONS).claim(session_id)
        except (SessionNotFound, InvalidSessionId):
            raise errors.session_not_found(session_id) from None
        except (SessionBusy, MisplacedLog, OSError) as exc:
            raise errors.internal_error(f"cannot open session {session_id!r}: {exc}") from None

    def top_level(self, session_id: str, verb: str) -> None:
        """Refuse a directory without a log (`-32002`) and a stored subagent's session (`verb` its
        top-level one instead); a header that does not read is the caller's to meet."""
        store = self.ctx.get(SESSIONS)
        if not store.path_of(session_id).is_file():
            raise errors.session_not_found(session_id)
        header = store.header_of(session_id)
        if header is not None and header.parent_session is not None:
            raise errors.invalid_params(
                f"session {session_id!r} is a subagent's session; "
                f"{verb} its top-level session {header.parent_session!r}"
            )

    def stored_events(self, session_id: str) -> tuple[SessionHeader, list[SessionEvent]]:
        """Every event of a stored log no agent here holds (its chunks too), read without its
        lock: a torn last line is left out, and a fork takes only ended turns."""
        store = self.ctx.get(SESSIONS)
        header = store.header_of(session_id)
        try:
            if header is None:
                raise ValueError("its header does not read")
            return header, read_events(store.path_of(session_id), store.registry)
        except (OSError, ValueError, UnknownEventType) as exc:
            raise errors.internal_error(f"cannot read session {session_id!r}: {exc}") from None

    def _closing(self, session_id: str) -> None:
        """Record where the close of `session_id` was read, if it is open and not closing yet."""
        if (entry := self.wire.sessions.get(session_id)) is not None and entry.closed_at is None:
            entry.closed_at = Connection.read_at()

    def _read(self, session_id: str) -> LoadedSession:
        """A stored log, read back (a torn tail repaired); errors as the client should see them."""
        try:
            return self.ctx.get(SESSIONS).load(session_id)
        except (SessionNotFound, InvalidSessionId):
            raise errors.session_not_found(session_id) from None
        except (SessionLogDamaged, UnsupportedVersion, MisplacedLog, OSError) as exc:
            raise errors.internal_error(f"cannot load session {session_id!r}: {exc}") from None

    async def _restore(self, session_id: str, cwd: str, loaded: LoadedSession, replay: bool) -> Agent:
        """Check a stored session against the request, re-create its agent, replay it if asked."""
        header = loaded.header
        if header.parent_session is not None:
            raise errors.invalid_params(
                f"session {session_id!r} is a subagent's session; load its top-level session"
                f" {header.parent_session!r} instead"
            )
        if header.cwd is None:  # a log from before cwds were recorded: it takes the client's
            loaded = loaded._replace(header=header.model_copy(update={"cwd": cwd}))
        elif os.path.normpath(header.cwd) != os.path.normpath(cwd):
            raise errors.invalid_params(
                f"cwd {cwd!r} is not the cwd of session {session_id!r}, which was created in {header.cwd!r}"
            )
        stored = StoredLog(header, loaded.events, self._children(session_id)) if replay else None
        factory: AgentFactory = self.ctx.get(AGENTS)
        try:
            agent = await factory.restore(loaded)
        except LogUnwritable as exc:
            raise errors.internal_error(f"cannot open session {session_id!r}: {exc}") from None
        try:
            self._replay(agent, stored, session_id)
        except BaseException:  # the session is not opened: its agent goes, and its lock with it
            with anyio.CancelScope(shield=True):
                await agent.dispose()
            raise
        return agent

    def _replay(self, agent: Agent, stored: StoredLog | None, session_id: str) -> None:
        """Replay a stored session (`stored`, when asked) and note the ids of its children: they
        take only `session/cancel`, whether this client saw them replayed or not (a resumed
        session's client may know their ids from before)."""
        if stored is None:
            self.wire.child_ids.update(self.ctx.get(SESSIONS).descendants_of(session_id))
            return
        # The session's MCP tools connect after the answer: past calls show as they were logged.
        logged = logged_tools(self.ctx, stored)
        tools = self.ctx.get(TOOLS)
        frames = history_updates(
            stored,
            lambda name: tools.get(name, agent.scope) or logged.get(name),
            lambda name: tools.get(name, None) or logged.get(name),
            context_window=agent.options.context_window,
            compaction=self.wire.client.compaction,
            child_sessions=self.wire.client.child_sessions,
            plans=self.wire.client.plans,
        )
        self.wire.send(frames)  # each frame queued as it is built, none kept
        self.wire.child_ids.update(log_.header.id for log_ in stored.descendants())

    def _children(self, session_id: str) -> list[StoredLog]:
        """The stored logs of the children `session_id` started (the stored sessions whose header
        names it as `parentSession`), each with its own children, recursively."""
        store = self.ctx.get(SESSIONS)

        def logs(parent: str, seen: frozenset[str]) -> list[StoredLog]:
            children = []
            for child_id in store.children_of(parent):
                if child_id not in seen:  # a parent cycle, only ever written by hand
                    try:
                        child = store.load(child_id)
                    except (SessionNotFound, SessionLogDamaged, UnsupportedVersion, MisplacedLog, OSError) as exc:
                        # The thread loads, the child shows as damaged (if its header tells where).
                        log.warning("session %s: its subagent's log cannot be loaded: %s", session_id, exc)
                        if (header := store.header_of(child_id)) is not None:
                            children.append(StoredLog(header, [], damage=str(exc)))
                        continue
                    children.append(StoredLog(child.header, child.events, logs(child_id, seen | {child_id})))
            return children

        return logs(session_id, frozenset({session_id}))


def logged_tools(ctx: Context, stored: StoredLog) -> dict[str, Tool[Any]]:
    """The MCP tools named in a stored session's logs (its children's included)."""
    if not ctx.has(MCP):
        return {}
    found: dict[str, Tool[Any]] = {}
    for log_ in (stored, *stored.descendants()):
        found.update(mcp_logged_tools(log_.events, ctx.get(MCP).limits))
    return found
