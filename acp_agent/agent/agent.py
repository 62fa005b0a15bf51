"""The agent handle: an inbox of turns, a loop that runs them, and a quiescent `dispose`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Final

import anyio

from acp_agent.agent.config import model_entry
from acp_agent.agent.keys import AGENTS, PROMPT
from acp_agent.agent.loop import TURN_ENDED, TurnControl, failed_turn, run_turn
from acp_agent.agent.options import AgentOptions
from acp_agent.agent.prompt import Section
from acp_agent.kernel.events import EventKey
from acp_agent.kernel.scope import Disposer, Scope
from acp_agent.kernel.states import Moves
from acp_agent.llm.conversation import Conversation
from acp_agent.session.content import ContentBlock
from acp_agent.session.events import STEER_SOURCE, TurnDisposed, TurnEndReason, TurnFailed
from acp_agent.session.log import Session

if TYPE_CHECKING:
    from acp_agent.kernel.context import Context


log = logging.getLogger(__name__)

TurnBody = Callable[["Agent", int], Awaitable[TurnEndReason]]
"""What a turn does after its user message is logged, in place of model steps: called with the
agent and the turn number, it logs the turn's events and says how the turn ended (a command that
answers without the model)."""

CANCELLING: Final[EventKey[Callable[[Agent, str | None], object]]] = EventKey("agent/cancelling")
"""Emitted (synchronous listeners) with the agent and the reason when `Agent.cancel` runs: what the
agent started beyond its turns (background children) is cancelled with it."""
DISPOSING: Final[EventKey[Callable[[Agent], Awaitable[object]]]] = EventKey("agent/disposing")
"""Awaited (`serial`) with the agent when its `dispose` begins, before its loop stops: what it owns
beyond its scope (background children) is disposed first."""


class Phase(Enum):
    """Where an agent is in its life (`Agent.phase`); `TRANSITIONS` says how it moves on."""

    NEW = "new"
    """Made, not published yet: messages queue, no turn runs (`start()` moves it on)."""
    IDLE = "idle"
    """No turn queued, no loop task: the agent holds nothing of its turns."""
    RUNNING = "running"
    """A loop task runs the queued turns, or is about to start."""
    STOPPED = "stopped"
    """Its loop was stopped by its task group's cancellation: no turn runs again, a message is
    settled `disposed` at once, and `dispose()` unwinds the rest."""
    STOPPING = "stopping"
    """`dispose()` runs: its listeners, then the loop stopped; no turn starts again."""
    DISPOSED = "disposed"
    """Stopped, and its scope unwound."""


TRANSITIONS: Final = Moves(
    {
        Phase.NEW: {Phase.IDLE, Phase.STOPPING},
        Phase.IDLE: {Phase.RUNNING, Phase.STOPPING},
        Phase.RUNNING: {Phase.IDLE, Phase.STOPPED, Phase.STOPPING},
        Phase.STOPPED: {Phase.STOPPING},
        Phase.STOPPING: {Phase.DISPOSED},
        Phase.DISPOSED: set(),
    }
)
"""Each phase's next phases: `start()` (new to idle), a queued message (idle to running), the
queue emptied (running to idle), the loop's task group cancelled (running to stopped),
`dispose()` (to stopping, then disposed)."""
TURNS_OVER: Final = frozenset({Phase.STOPPED, Phase.STOPPING, Phase.DISPOSED})
"""The phases in which no turn starts again: a message is settled `disposed` at once."""


@dataclass(eq=False)
class Ticket:
    """A queued user message; `wait()` gives the reason the turn that claimed it ended."""

    content: Sequence[ContentBlock]
    source: str = "user"
    body: TurnBody | None = None
    """The turn's own body instead of model steps (None: a model turn)."""
    reason: TurnEndReason | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    cancelled: bool = False
    """A cancel came while this message was queued or its turn ran: the turn ends `aborted`."""
    cancel_reason: str | None = None
    held: bool = False
    """The next turn waits for `release()` after this one settles (see `Agent.followup`)."""
    released: anyio.Event = field(default_factory=anyio.Event)

    async def wait(self) -> TurnEndReason:
        await self.done.wait()
        assert self.reason is not None  # set before `done`, always
        return self.reason

    def settle(self, reason: TurnEndReason) -> None:
        self.reason = reason
        self.done.set()

    def cancel(self, reason: str | None) -> None:
        if not self.cancelled:  # the first cancel is the one that ended the turn
            self.cancelled = True
            self.cancel_reason = reason

    def release(self) -> None:
        """The holder has reported this turn's outcome: the next turn may start."""
        self.released.set()


class Agent:
    """One agent: its session log, options, route, scope, and the loop running its turns.

    Its loop is a task in the context's task group that runs while turns are queued: started
    when a message comes to an idle agent, it ends once the queue is empty (an idle agent holds
    no task, coroutine or cancel scope). `dispose()` stops it (an open turn ends `disposed`), waits
    until it has stopped, and unwinds the agent's scope. Its life is a `Phase`, changed in one
    place (`_enter`), which refuses a move `TRANSITIONS` does not list (`TransitionError`).
    """

    def __init__(
        self,
        ctx: Context,
        session: Session,
        options: AgentOptions,
        scope: Scope,
        route: str,
    ) -> None:
        self.ctx = ctx
        self.session = session
        self.options = options
        self.scope = scope
        self.route = route
        self.conversation = Conversation(session)
        """What the model sees of the session (the factory has it follow the log once published)."""
        self._inbox: list[Ticket] = []
        """The turns queued behind the running one, oldest first (a list: it holds one or two;
        README, Performance, on what an idle session keeps)."""
        self._busy: anyio.Event | None = None
        """Set when the agent is idle again; None while it is. Made only for a wait, so an idle
        agent holds no event (README, Performance, on what an idle session keeps)."""
        self._turn: TurnControl | None = None
        """The running turn's cancel scope and steering: this agent owns them (see `_run`)."""
        self._running: Ticket | None = None
        self._phase = Phase.NEW
        self._loop: anyio.CancelScope | None = None
        """The scope of the loop task that runs the queue, or is about to (what `dispose` cancels:
        a scope cancelled before its task enters it stops the task as it enters)."""
        self._stopped: anyio.Event | None = None
        """Set when the loop stops: made by a `dispose` that waits for it."""
        self.left_open: TurnFailed | None = None
        """How the turn a failure left open in the log ended (see `end_left_open`)."""
        self.turn_body: TurnBody | None = None
        """The body of every turn queued without one of its own (None: model steps). An agent
        that stands in for another (an ACP agent run as a child process) sets it in its setup."""

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def takes_images(self) -> bool:
        """Whether its model takes images (`vision` in the agents row; none without the row)."""
        agents = self.ctx.find(AGENTS)
        return agents is not None and model_entry(agents.models, self.options.model).vision

    def add_prompt_section(self, order: int, name: str, text: str) -> Disposer:
        """Add a literal section to its own system prompt while it lives (see `CallingAgent`)."""
        return self.ctx.get(PROMPT).add(Section(order=order, name=name, text=text, literal=True), owner=self.scope)

    @property
    def phase(self) -> Phase:
        return self._phase

    def _enter(self, phase: Phase) -> None:
        """Move to `phase`: the one place the phase changes."""
        self._phase = TRANSITIONS.move(f"agent {self.route}", self._phase, phase)

    @property
    def busy(self) -> bool:
        """Whether a turn is running or queued."""
        return self._busy is not None

    @property
    def in_turn(self) -> bool:
        """Whether a turn is running (a turn that ended and waits for its `release` is not)."""
        return self._running is not None

    @property
    def queued(self) -> int:
        """How many turns are queued behind the running one."""
        return len(self._inbox)

    def start(self) -> None:
        """Run the turns queued so far, and those to come (once: a new agent is started once)."""
        self._enter(Phase.IDLE)
        self._spawn()

    def _spawn(self) -> None:
        if self._phase is Phase.IDLE and self._inbox:
            self._enter(Phase.RUNNING)
            loop = self._loop = anyio.CancelScope()
            self.ctx.tasks.start_soon(self._run, loop, name=f"agent {self.route}")

    def followup(
        self, content: Sequence[ContentBlock], source: str = "user", body: TurnBody | None = None, *, hold: bool = False
    ) -> Ticket:
        """Queue a turn for `content`; the returned ticket settles when that turn ends. Turns run
        one at a time, in the order they were queued. `body` (default: `turn_body`) replaces the
        turn's model steps (see `TurnBody`).

        With `hold`, the turn after this one waits until `ticket.release()`: the caller reports the
        outcome first (the ACP layer answers a prompt before the next prompt's updates go out).
        """
        ticket = Ticket(content, source, body or self.turn_body, held=hold)
        if self._phase in TURNS_OVER:
            ticket.settle(TurnDisposed())
            return ticket
        self._inbox.append(ticket)
        if self._busy is None:
            self._busy = anyio.Event()
        self._spawn()
        return ticket

    @property
    def turn_running(self) -> bool:
        """Whether a turn runs now (one queued behind a held answer does not)."""
        return self._turn is not None

    def steer(self, content: Sequence[ContentBlock]) -> None:
        """Add `content` to the running turn at its next step, or start a turn when idle. What
        the turn did not take before it ended (it answered, or was cancelled, meanwhile) is the
        next turn's message."""
        if self._turn is None:
            self.followup(content, STEER_SOURCE)
        else:
            self._turn.steering.append(content)

    def cancel(self, reason: str | None = None, *, sparing: Collection[Ticket] = ()) -> None:
        """End the running turn and every turn queued before this call `aborted` (with `reason`),
        but those of the tickets in `sparing` (messages the caller knows came after its cancel).

        A queued message still gets its turn, which ends at once without asking the model: the
        message is logged, as the client showed it. What is queued after the cancel runs.
        """
        for ticket in [self._running, *self._inbox]:
            if ticket is not None and ticket not in sparing:
                ticket.cancel(reason)
        if self._turn is not None and self._running not in sparing:
            self._turn.scope.cancel()
        self.ctx.events.emit(CANCELLING, self, reason)

    async def when_idle(self) -> None:
        """Return once no turn runs and none is queued."""
        if self._busy is None:
            await anyio.lowlevel.checkpoint()
        else:
            await self._busy.wait()

    async def dispose(self) -> None:
        """Stop the loop (an open turn ends `disposed`), wait for quiescence, unwind the scope.

        Idempotent; concurrent callers all return after the agent has stopped.
        """
        if self._phase in (Phase.STOPPING, Phase.DISPOSED):
            await self._until_stopped()
            return
        self._enter(Phase.STOPPING)
        with anyio.CancelScope(shield=True):
            await self.ctx.events.serial(DISPOSING, self)
        if self._loop is not None:
            self._loop.cancel()
        await self._until_stopped()
        self._settle_queued()  # queued before `start()`: no loop ever ran them
        self.scope.dispose()
        self._enter(Phase.DISPOSED)

    async def _until_stopped(self) -> None:
        if self._loop is None:
            await anyio.lowlevel.checkpoint()
            return
        if self._stopped is None:
            self._stopped = anyio.Event()
        await self._stopped.wait()

    def _settle_queued(self) -> None:
        """The queued messages end their turns unrun (`disposed`), and the agent is idle."""
        for ticket in self._inbox:
            ticket.settle(TurnDisposed())
        self._inbox.clear()
        self._idle_again()

    def _idle_again(self) -> None:
        if self._busy is not None:
            self._busy.set()
            self._busy = None

    async def _run_next(self) -> None:
        """Run the first queued turn. Its own frame, so nothing of the turn (its ticket, content
        and events; its cancel scope) outlives it in the loop: an idle session keeps none of that."""
        ticket = self._running = self._inbox.pop(0)
        # The turn's cancel scope (what `cancel()` cancels) is made here, already cancelled when
        # a cancel came while the message waited in the queue.
        turn = self._turn = TurnControl()
        if ticket.cancelled:
            turn.scope.cancel()
        reason: TurnEndReason
        try:
            reason = await run_turn(self, ticket, turn)
            ticket.settle(reason)
        except Exception as exc:
            # The guard of the session's turns: whatever raised (its log could not be written, a
            # subscriber failed while the turn was closed) fails this turn alone, not the
            # process and its other sessions. The turn stays open as its log has it; the next
            # turn ends it first (`end_left_open`).
            failed = failed_turn(exc)
            if self.session.open_turn is not None:
                self.left_open = failed
            log.error("session %s: turn failed: %s", self.id, failed.message, exc_info=exc)
            reason = failed
            ticket.settle(failed)
        finally:
            self._turn = self._running = None
            if not ticket.done.is_set():
                ticket.settle(TurnDisposed())
        for content in turn.steering:  # came after the turn's last step began
            self.followup(content, STEER_SOURCE)
        if ticket.held:
            await ticket.released.wait()
        try:
            await self.ctx.events.parallel(TURN_ENDED, self, reason)
        except Exception as exc:  # the same guard: what follows a turn fails alone
            log.error("session %s: after its turn: %s", self.id, exc, exc_info=exc)

    async def _run(self, loop: anyio.CancelScope) -> None:
        """Run the queued turns until none is left (a message queued meanwhile is run by this
        loop: the check that ends it and its end take no turn of the event loop between them).
        `loop` is cancelled already when the agent was disposed before this task ran."""
        emptied = False
        try:
            with loop:
                while self._inbox:
                    await self._run_next()
                emptied = True
        finally:
            self._loop = None
            if self._phase is Phase.RUNNING:  # else a `dispose` runs, and moves the phase on itself
                self._enter(Phase.IDLE if emptied else Phase.STOPPED)
            self._settle_queued()  # stopped: the queued messages end their turns unrun
            if self._stopped is not None:
                self._stopped.set()
