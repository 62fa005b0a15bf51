"""A scenario's `input.json`: the steps an ACP client takes, its answers to permission requests,
and the capabilities it advertises."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from acp_agent.kernel.models import Model
from acp_agent.snapshot.errors import InvalidScenario

INPUT = "input.json"
WORKSPACE = "workspace"
ROOTS = "roots"
"""Directories copied beside the run's cwd (`<workdir>/roots/`): a session's other roots."""
CONFIG = "config"
"""A scenario's user configuration directory (`ACP_AGENT_CONFIG`): copied for the run, else empty."""
ROWS = "cordis.yml"
"""A scenario's own loader rows (an ACP child's provider and tool rows), added to the run's
composition."""

PermissionKind = Literal[
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
    "allow_server_always",
    "allow_prefix",
    "reject_prefix",
    "cancelled",
]
"""An option to pick, by id or (the first of that) kind, or `cancelled`: the outcome a client gives
when the prompt turn was cancelled before the user answered."""
PermissionPolicy = Literal["ask", "allow", "deny"]
SandboxBackend = Literal["landlock", "bubblewrap", "none"]


class Initialize(Model):
    """`initialize` with protocol version 1 and the scenario's `clientCapabilities` (by default no
    fs and no terminal)."""

    op: Literal["initialize"]


class NameValue(Model):
    name: str
    value: str


class McpServer(Model):
    """An MCP server handed to `session/new`, `session/load` or `session/resume`, as ACP has it
    but with paths relative to the scenario directory: the runner makes them absolute (`command`
    `python` is the runner's interpreter; an argument naming a file of the scenario becomes its
    absolute path). An `http` or `sse` server with `serve` is started by the runner before the
    server under test, as `python <serve...> <port>` on a loopback port it picks, and its `url`
    is `http://127.0.0.1:<port>` + `path`."""

    type: Literal["stdio", "http", "sse"] = "stdio"
    name: str
    command: str | None = None
    args: list[str] = []
    env: list[NameValue] = []
    url: str | None = None
    serve: list[str] = []
    path: str = ""
    headers: list[NameValue] = []


class NewSession(Model):
    """`session/new` in the run's cwd (or `cwd`, a directory inside it), with `mcpServers`; later
    prompts go to the newest session."""

    op: Literal["newSession"]
    cwd: str | None = None
    """A relative path: the session's cwd is that directory of the run's cwd (created if missing)."""
    mcp_servers: list[McpServer] = []
    additional_directories: list[str] = []
    """`additionalDirectories`, each a path relative to the run's cwd sent absolute (a copy of the
    scenario's `roots/<name>/` is `../roots/<name>`)."""


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
    session_id: str | None = None
    """Default: the newest session of the run (one it closed, say)."""
    cwd: str | None = None
    """Default: the run's cwd (the one the pre-seeded logs get for `{{cwd}}`)."""
    expect_error: int | None = None
    mcp_servers: list[McpServer] = []


class ForkSession(Model):
    """`session/fork` of the session `session_id` (default: the newest) in the run's cwd: a new
    thread that starts from the source's ended turns. Later prompts go to the fork (a
    `loadSession` without `sessionId` then loads it). With `expect_error` it must answer an error
    of that code."""

    op: Literal["forkSession"]
    session_id: str | None = None
    expect_error: int | None = None


class Prompt(Model):
    """`session/prompt` with one text block, then the `content` blocks as they are (attachments:
    `resource`, `resource_link`, `image`); it must answer a result."""

    op: Literal["prompt"]
    text: str
    content: list[dict[str, Any]] = []


class PromptExpectError(Model):
    """`session/prompt` (with the `content` blocks after the text, as `prompt`) that must answer
    an error, of the code `expect_error` when given."""

    op: Literal["promptExpectError"]
    text: str
    content: list[dict[str, Any]] = []
    expect_error: int | None = None


class PromptAndCancel(Model):
    """`session/prompt`, then `session/cancel` at its first update of the kind `at` (by default an
    `agent_message_chunk`), or at the agent's first request of that method on the session
    (`elicitation/create`: while the question's form is open); it must answer
    `{"stopReason": "cancelled"}`."""

    op: Literal["promptAndCancel"]
    text: str
    at: str = "agent_message_chunk"


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


class QueuedPrompt(Model):
    """Another `session/prompt` with one text block."""

    prompt: str


class QueuedCancel(Model):
    """`session/cancel` for the session."""

    cancel: Literal[True]


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptWhileBusy(Model):
    """`session/prompt` with `text`; at its first `agent_message_chunk`, the `then` messages are
    written in one go, without waiting for anything (so they reach the server while the first
    prompt runs, or settles after a cancel among them). Each prompt must answer the stop reason
    of `stop_reasons`, in order, `text`'s first."""

    op: Literal["promptWhileBusy"]
    text: str
    then: list[QueuedPrompt | QueuedCancel] = Field(min_length=1)
    stop_reasons: list[StopReason]

    @model_validator(mode="after")
    def _a_stop_reason_per_prompt(self) -> PromptWhileBusy:
        prompts = 1 + sum(isinstance(item, QueuedPrompt) for item in self.then)
        if len(self.stop_reasons) != prompts:
            raise ValueError(
                f"stopReasons: {prompts} prompt(s) need {prompts} stop reason(s), got {len(self.stop_reasons)}"
            )
        return self


SteeringOutcome = Literal["injected", "startedNewTurn", "promptRequired"]


class PromptAndSteer(Model):
    """`session/prompt`; at the agent's first permission request, the steering message `steer`
    (`_session/steering`) is written just before the answer, in the same write: the turn waits
    for that answer, so the message joins the running turn on every run. Its answer must be
    `{"outcome": "injected"}`, the prompt's `end_turn`. Needs `permissionPolicy: ask` and an
    answer in `permissions`."""

    op: Literal["promptAndSteer"]
    text: str
    steer: str


class Steer(Model):
    """`_session/steering` for the newest session while no turn runs, with `idle_behavior` when
    given; its answer must be `{"outcome": outcome, ...}`. A message that started a turn is
    waited for until that turn's closing `session_info_update` (no prompt answers it), which the
    next step's lines follow in the transcript."""

    op: Literal["steer"]
    text: str
    idle_behavior: Literal["promptRequired"] | None = None
    outcome: SteeringOutcome


class PromptAndCancelAtToolCall(Model):
    """`session/prompt`, then `session/cancel` once the session shows the `tool_call` of id
    `tool_call_id` (the tool is about to run: a slow one is cancelled while it runs); it must
    answer `{"stopReason": "cancelled"}`."""

    op: Literal["promptAndCancelAtToolCall"]
    text: str
    tool_call_id: str
    delay: float = Field(default=0, ge=0)
    """Seconds to wait after the `tool_call` shows before cancelling: the card is out before the
    tool starts, so a scenario whose tool must be running (its request at an MCP server) waits."""


class PromptAndCancelChild(Model):
    """`session/prompt` from a client with child sessions; once the child announced with `title`
    (its `subagent_update`) has shown a `tool_call` on its own session, `session/cancel` with the
    child's session id; the prompt must answer `stop_reason` (the parent goes on)."""

    op: Literal["promptAndCancelChild"]
    text: str
    title: str
    stop_reason: StopReason = "end_turn"


class ToChild(Model):
    """A request (`method`, `params`) for the child session announced with `title`, its
    `sessionId` that child's; it must answer the error `expect_error` (or a result, without).
    `session/cancel` is sent as the notification it is."""

    op: Literal["toChild"]
    title: str
    method: str
    params: dict[str, Any] = {}
    expect_error: int | None = None


class SetMode(Model):
    """`session/set_mode` for the newest session; with `expect_error` it must answer that error."""

    op: Literal["setMode"]
    mode_id: str
    expect_error: int | None = None


class SetConfigOption(Model):
    """`session/set_config_option` (a select's value) for the newest session; with `expect_error`
    it must answer that error."""

    op: Literal["setConfigOption"]
    config_id: str
    value: str
    expect_error: int | None = None


class WriteFile(Model):
    """Write `text` to `path` (relative to the run's cwd; parent directories created): the user
    editing a file between two prompts."""

    op: Literal["writeFile"]
    path: str
    text: str


class AwaitWokenTurn(Model):
    """Wait until `count` turns of the newest session that no prompt started (a background
    child's notice woke them) have ended, as their closing `session_info_update` says
    (`_meta.acpAgent.turn: "ended"`), counted from the run's start: a user who waits for the
    agent to finish before typing. The next step's lines are written after that update."""

    op: Literal["awaitWokenTurn"]
    count: int = Field(default=1, ge=1)


class AwaitToolCallOf(Model):
    """Wait until the agent of `route` (a child, by its `_meta.acpAgent.route`) has shown a
    `tool_call`, counted from the run's start. The transcript places the next step's lines after
    the last answer still (the child's frames move: a background child's go last)."""

    op: Literal["awaitToolCallOf"]
    route: str


class AwaitTrust(Model):
    """Wait until the newest session's trust question has been answered, as its card's last
    `tool_call_update` says (`completed` or `failed`): a user who answers it before typing. The
    next step's lines are written after that update."""

    op: Literal["awaitTrust"]


class AwaitTitle(Model):
    """Wait until the newest session shows the title `title` (a `session_info_update`): the
    model's title comes after the turn that prompted it has answered, from a call of its own, so
    a user who waits for the thread to be named before typing. The next step's lines are written
    after that update."""

    op: Literal["awaitTitle"]
    title: str


class CloseSession(Model):
    """`session/close` for the newest session; it must answer a result. Later steps may load it
    (`loadSession` without `sessionId`)."""

    op: Literal["closeSession"]


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
    | ForkSession
    | Prompt
    | PromptExpectError
    | PromptAndCancel
    | PromptAndCancelWhen
    | PromptWhileBusy
    | PromptAndSteer
    | Steer
    | PromptAndCancelAtToolCall
    | PromptAndCancelChild
    | ToChild
    | SetMode
    | SetConfigOption
    | AwaitWokenTurn
    | AwaitTrust
    | AwaitToolCallOf
    | AwaitTitle
    | CloseSession
    | Cancel
    | WriteFile
    | Raw,
    Field(discriminator="op"),
]


class FileSystemCapabilities(Model):
    read_text_file: bool = False
    write_text_file: bool = False


class SessionCapabilities(Model):
    notices: dict[str, str] | None = None
    """`{}`: the client shows `notice` updates."""
    compaction: dict[str, str] | None = None
    """`{}`: the client shows `compaction_update` and `compaction_summary_chunk` updates."""


class ClientCapabilities(Model):
    """What the client advertises in `initialize`, and serves: `fs/read_text_file` and
    `fs/write_text_file` from the run's cwd (`client_fs.py`), `terminal/*` by running the command
    in it (`client_terminal.py`). A request for a method it did not advertise is a failure."""

    fs: FileSystemCapabilities = FileSystemCapabilities()
    terminal: bool = False
    session: SessionCapabilities | None = None
    subagents: dict[str, str] | None = None
    """`{}`: the client takes child agents as child sessions (`subagent_update`, ...)."""
    plan: dict[str, str] | None = None
    """`{}`: the client takes plan operations (`plan_update`, `plan_removed`)."""
    elicitation: dict[str, dict[str, str]] | None = None
    """`{"form": {}}`: the client answers `elicitation/create` forms (with `Scenario.elicitations`)."""


class Scenario(Model):
    steps: list[Step]
    permissions: list[PermissionKind] = []
    """Answers to `session/request_permission`, in order, each picking the option of that kind."""
    elicitations: list[dict[str, Any] | Literal["open"]] = []
    """Answers to `elicitation/create`, in order, each the client's result as written
    (`{"action": "accept", "content": {...}}`, `{"action": "decline"}`, ...), or `"open"`: the user
    leaves the form open, and the request is answered (`-32800`) only when the agent withdraws it
    with `$/cancel_request` (a `promptAndCancel` step `at` `elicitation/create` cancels the turn
    meanwhile)."""
    permission_policy: PermissionPolicy | None = None
    """The permissions row's default rule for the run (`ACP_AGENT_PERMISSIONS`); unset: the
    config's own default (`allow` in the snapshot and record configs)."""
    sandbox: SandboxBackend | None = None
    """The sandbox row's backend for the run (`ACP_AGENT_SANDBOX`); unset: the config's own
    (`landlock` in the snapshot and record configs). `none`: confined commands are refused."""
    client_capabilities: ClientCapabilities = ClientCapabilities()
    repository: bool = False
    """The run's cwd is the root of a repository (it holds a `.git` directory, which a scenario's
    `workspace/` cannot: git refuses to track one)."""


def load_scenario(directory: Path) -> Scenario:
    path = directory / INPUT
    try:
        return Scenario.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise InvalidScenario(path, str(exc)) from exc
