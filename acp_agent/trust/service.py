"""`ctx.get(TRUST)`: whether a session may run what its project configures.

What needs trust comes from providers (`add_items`): the hooks of a project's settings files,
its `.mcp.json` servers, its allow rules. The first session in a project that has any asks the
user once its opening answer is out (`open`, called by the client layer), before any of them
runs: allow once (this session), allow always (saved in the `TrustStore`) or reject. Whoever
needs the answer awaits `trusted(agent)`. Untrusted, the user is told once per session. A child
agent has its thread's answer; the user's own files never need trust.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal
from weakref import WeakKeyDictionary

import anyio

from acp_agent.agent.keys import AGENTS
from acp_agent.commands.builtins import answer
from acp_agent.commands.registry import COMMANDS, Command, Invocation
from acp_agent.kernel.context import Context, ServiceKey
from acp_agent.kernel.scope import Disposer, Scope
from acp_agent.trust import texts
from acp_agent.trust.store import TrustStore

if TYPE_CHECKING:
    from acp_agent.agent.agent import Agent, Ticket

log = logging.getLogger(__name__)

TrustAnswer = Literal["allow_once", "allow_always", "reject", "cancelled"]


@dataclass(frozen=True)
class TrustItem:
    """A project file that needs trust, and what it would run or allow (one line each)."""

    path: Path
    lines: tuple[str, ...]


@dataclass(frozen=True)
class TrustQuestion:
    project: Path
    items: tuple[TrustItem, ...]

    @property
    def title(self) -> str:
        return texts.question(self.project)

    def paragraphs(self) -> list[str]:
        """What the question's card shows: why, then each file and its lines."""
        listed = [f"{item.path}:\n" + "\n".join(f"- `{line}`" for line in item.lines) for item in self.items]
        return [texts.explained(self.project), *listed]


class TrustAsker(ABC):
    """How the user is asked and told (the client layer implements it)."""

    @abstractmethod
    async def ask(self, agent: Agent, question: TrustQuestion) -> TrustAnswer:
        """The user's answer; `cancelled` when they could not or did not answer."""

    @abstractmethod
    def tell(self, agent: Agent, text: str) -> None:
        """Say `text` to the user of `agent`'s session, outside any turn."""


ItemsProvider = Callable[["Agent"], list[TrustItem]]


@dataclass(eq=False)
class _Decision:
    project: Path
    question: TrustQuestion | None
    trusted: bool | None = None
    """None: nothing needs trust; else the answer once `decided` is set."""
    saved: bool = False
    decided: anyio.Event = field(default_factory=anyio.Event)


class Trust:
    """The trust of every session of one composition."""

    def __init__(self, ctx: Context, store: TrustStore) -> None:
        self._ctx = ctx
        self.store = store
        self._providers: list[ItemsProvider] = []
        self._askers: list[TrustAsker] = []
        self._decisions: WeakKeyDictionary[Scope, _Decision] = WeakKeyDictionary()

    def add_items(self, provider: ItemsProvider) -> Disposer:
        """Ask `provider` what a session's project holds that needs trust."""
        self._providers.append(provider)
        return lambda: self._providers.remove(provider) if provider in self._providers else None

    def use_asker(self, asker: TrustAsker) -> Disposer:
        self._askers.append(asker)
        return lambda: self._askers.remove(asker) if asker in self._askers else None

    def open(self, agent: Agent) -> None:
        """Start deciding a top-level session's trust (once): at once when nothing needs it or
        it is saved, else by asking the user in the background."""
        if agent.scope in self._decisions:
            return
        project = Path(agent.session.cwd or ".").resolve()
        items = tuple(item for provider in self._providers for item in provider(agent))
        decision = self._decisions[agent.scope] = _Decision(project, TrustQuestion(project, items) if items else None)
        if decision.question is None:
            decision.decided.set()
            return
        commands = self._ctx.find(COMMANDS)
        if commands is not None:
            command = Command("trust", texts.TRUST_DESCRIPTION, self._command, texts.TRUST_HINT)
            commands.add(command, owner=agent.scope)
        if self.store.trusted(project):
            decision.trusted = decision.saved = True
            decision.decided.set()
            return
        self._ctx.tasks.start_soon(self._ask, agent, decision, name=f"trust of {agent.route}")

    async def trusted(self, agent: Agent) -> bool:
        """Whether `agent`'s thread may run its project's hooks, servers and allow rules
        (waits for the user's answer)."""
        top = agent.ctx.get(AGENTS).top_level(agent)
        self.open(top)
        decision = self._decisions[top.scope]
        await decision.decided.wait()
        return decision.trusted is not False

    async def _ask(self, agent: Agent, decision: _Decision) -> None:
        assert decision.question is not None
        found: TrustAnswer = "cancelled"
        try:
            if self._askers:
                found = await self._askers[-1].ask(agent, decision.question)
        except Exception:
            log.warning("the trust question of %s failed", decision.project, exc_info=True)
        finally:  # a question cut short (the server stops) leaves the project untrusted
            decision.trusted = found in ("allow_once", "allow_always")
            decision.decided.set()
        if found == "allow_always":
            decision.saved = True
            self.store.save(decision.project)
        if not decision.trusted and self._askers:
            self._askers[-1].tell(agent, texts.untrusted(decision.project))

    def _command(self, invocation: Invocation) -> Ticket:
        decision = self._decisions[invocation.agent.scope]
        if invocation.arguments == "revoke":
            was_saved = self.store.revoke(decision.project)
            decision.saved = False
            return answer(invocation, texts.revoked(decision.project, was_saved))
        return answer(invocation, texts.status(decision.project, decision.trusted, decision.saved))


TRUST: Final = ServiceKey[Trust]("trust")
"""`ctx.get(TRUST)`: whether each session may run its project's hooks, servers and allow rules."""
