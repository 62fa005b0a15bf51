"""A scenario's `input.json`: the steps an ACP client takes, and its answers to permission requests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError

from acp_agent.kernel.models import Model
from acp_agent.snapshot.errors import InvalidScenario

INPUT = "input.json"
WORKSPACE = "workspace"

PermissionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class Initialize(Model):
    """`initialize` with protocol version 1 and a client that offers no fs or terminal."""

    op: Literal["initialize"]


class NewSession(Model):
    """`session/new` in the run's cwd; later prompts go to the newest session."""

    op: Literal["newSession"]


class NewSessionExpectError(Model):
    """`session/new` that must be refused (a relative `cwd`, `additionalDirectories`, ...)."""

    op: Literal["newSessionExpectError"]
    cwd: str | None = None
    """Default: the run's cwd."""
    additional_directories: list[str] | None = None


class LoadSession(Model):
    """`session/load` (or, as `resumeSession`, `session/resume`) of a stored session: one of the
    scenario's `sessions/<id>/` logs, stored before the server starts, or one the run closed.
    Later prompts go to it. With `expect_error` it must answer an error of that code."""

    op: Literal["loadSession", "resumeSession"]
    session_id: str
    cwd: str | None = None
    """Default: the run's cwd (the one the pre-seeded logs get for `{{cwd}}`)."""
    expect_error: int | None = None


class Prompt(Model):
    """`session/prompt` with one text block; it must answer a result."""

    op: Literal["prompt"]
    text: str


class PromptExpectError(Model):
    """`session/prompt` that must answer an error."""

    op: Literal["promptExpectError"]
    text: str


class PromptAndCancel(Model):
    """`session/prompt`, then `session/cancel` at its first `agent_message_chunk`; it must answer
    `{"stopReason": "cancelled"}`."""

    op: Literal["promptAndCancel"]
    text: str


class PromptAndCancelWhen(Model):
    """`session/prompt`, then `session/cancel` once `children` distinct child agents (any depth) have
    each shown a `tool_call` on the session (the route in its `_meta.acpAgent`); it must answer
    `{"stopReason": "cancelled"}`.

    A child's tool call reaches the wire only after its model stream for that step is fully logged,
    right before the tool runs: when each child's tool waits (bash `sleep 30`), the cancel finds
    every child in the same state on every run, whatever the scheduling."""

    op: Literal["promptAndCancelWhen"]
    text: str
    children: int = Field(ge=1)


class Cancel(Model):
    """`session/cancel` for the newest session (a notification: nothing to wait for)."""

    op: Literal["cancel"]


class Raw(Model):
    """A raw line, written as it is (garbage welcome). Unless it is a notification, the next
    response no request of ours claims is its answer: an error with `expect_error` as its code
    when given, else a result."""

    op: Literal["raw"]
    line: str
    repeat: int = Field(default=1, ge=1)
    """The line is `line` repeated this many times: how a 1 MB line fits in input.json."""
    expect_error: int | None = None


Step = Annotated[
    Initialize
    | NewSession
    | NewSessionExpectError
    | LoadSession
    | Prompt
    | PromptExpectError
    | PromptAndCancel
    | PromptAndCancelWhen
    | Cancel
    | Raw,
    Field(discriminator="op"),
]


class Scenario(Model):
    steps: list[Step]
    permissions: list[PermissionKind] = []
    """Answers to `session/request_permission`, in order, each picking the option of that kind."""


def load_scenario(directory: Path) -> Scenario:
    path = directory / INPUT
    try:
        return Scenario.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise InvalidScenario(path, str(exc)) from exc
