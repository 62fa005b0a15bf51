"""Where the `bash` tool runs a command: a local process group by default (`bash.LocalRunner`), or
whatever the `command_runner` service picks for a call (the editor's terminal, through ACP's
`terminal/*` methods, when the ACP layer provides one). Nothing here knows ACP.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Final, NamedTuple, Protocol

from acp_agent.kernel.context import ServiceKey
from acp_agent.tools.base import ToolCallContext, ToolResult


class TerminalRead(NamedTuple):
    """What an editor terminal holds of its command's output."""

    output: str
    """Its last bytes, at most the limit it was opened with."""
    truncated: bool
    """It dropped the beginning of the output to stay within the limit."""


class JobTerminal(ABC):
    """A background job's command running in an editor terminal (`CommandRunner.open_terminal`).
    Its requests raise `TerminalFailed` when the editor refuses them or went away."""

    terminal_id: str
    """What the job's card embeds."""

    @abstractmethod
    async def read(self) -> TerminalRead:
        """The output the terminal holds now."""

    @abstractmethod
    async def wait(self) -> int:
        """Wait until the command exits: its exit status (negative: the signal that ended it)."""

    @abstractmethod
    async def kill(self) -> None:
        """End the command (the terminal stays, with its output)."""

    @abstractmethod
    async def release(self) -> None:
        """Kill the command if it still runs and release the terminal: shielded from a
        cancellation, bounded, quiet about an editor that refuses or went away."""


class CommandOutcome(NamedTuple):
    """What a finished (or killed) command produced."""

    output: str
    """Merged stdout and stderr, decoded, shortened by the runner when it was too long (with a
    note saying so)."""
    exit_code: int
    """The shell's exit status; negative: killed by that signal."""
    timed_out: bool
    signal: str | None = None
    """The name of the signal that ended the command, when the runner knows it only by a name
    that has no number here (`exit_code` is then -1)."""
    raw_output: dict[str, Any] | None = None
    """What the call's card shows as its raw output with the result (a command run in the
    editor's terminal, for a client that does not draw terminals)."""


class CommandRunner(ABC):
    """Runs one shell command for a `bash` call and waits for it to end."""

    @abstractmethod
    async def run(
        self, command: str, *, call: ToolCallContext, timeout_seconds: float, max_output_bytes: int
    ) -> CommandOutcome:
        """Run `command` with bash in `call.cwd`; after `timeout_seconds` kill it (`timed_out`);
        keep at most about `max_output_bytes` of its output. A cancellation kills the command
        before it propagates: nothing the command started may outlive the call. Raises
        `CommandNotStarted` (its message for the model) when the command could not start."""

    async def open_terminal(
        self, command: str, *, call: ToolCallContext, env: dict[str, str], max_output_bytes: int
    ) -> JobTerminal | None:
        """Start `command` for a background job in a terminal the editor shows, confined as `run`
        confines a command and with `env` added to its environment, the terminal keeping at most
        `max_output_bytes` of its output; None when this runner has no terminals (the job then
        runs in a local process group)."""
        return None


RunnerProvider = Callable[[ToolCallContext], CommandRunner]
"""Picks the runner of one call (it knows the call's session, route and cwd)."""

RUNNER_SERVICE: Final = ServiceKey[RunnerProvider]("command_runner")
"""The context service a composition may provide (the ACP layer's client terminals)."""


class JobStarter(Protocol):
    """Starts background jobs (`bash {run_in_background: true}`): the `jobs` plugin's `Jobs`."""

    async def start(self, command: str, call: ToolCallContext) -> ToolResult:
        """Start `command` as a job of the calling agent; the answer names it (`job-1`)."""
        ...


JOBS: Final = ServiceKey[JobStarter]("jobs")
"""The context service that starts background jobs (absent: `run_in_background` is refused)."""
