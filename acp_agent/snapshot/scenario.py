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
    Initialize | NewSession | NewSessionExpectError | Prompt | PromptExpectError | PromptAndCancel | Cancel | Raw,
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
