"""The ACP v1 messages this server reads and writes, as pydantic models.

Only what the server uses is modelled; the tests hold these against the official package's models
and the protocol's JSON Schema. Incoming params ignore unknown keys (clients add fields over time);
what goes out is exactly what is modelled.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from acp_agent.kernel.models import Model

PROTOCOL_VERSION = 1


class Incoming(Model):
    """Params sent by the client: lenient about fields this server does not know, strict about the
    types of those it does (`"1"` is not a protocol version, `1` is not a boolean)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


# -- initialize / authenticate ---------------------------------------------------------------


class FileSystemCapabilities(Incoming):
    read_text_file: bool = False
    write_text_file: bool = False


class AuthCapabilities(Incoming):
    terminal: bool = False
    """The client can run the agent's command, with a method's `args`, in an interactive terminal."""


class ClientSessionCapabilities(Incoming):
    notices: dict[str, Any] | None = None
    """`{}`: the client shows `notice` updates."""
    compaction: dict[str, Any] | None = None
    """`{}`: the client shows `compaction_update` / `compaction_summary_chunk`."""


class ClientCapabilities(Incoming):
    fs: FileSystemCapabilities = FileSystemCapabilities()
    terminal: bool = False
    auth: AuthCapabilities = AuthCapabilities()
    session: ClientSessionCapabilities | None = None
    subagents: dict[str, Any] | None = None
    """`{}`: the client shows child agents as child sessions (`subagent_update`, `session_message`)."""
    plan: dict[str, Any] | None = None
    """Unstable; `{}`: the client takes `plan_update` and `plan_removed` (else the whole `plan`)."""
    elicitation: dict[str, Any] | None = None
    """Unstable; `{form: {}}`: the client answers `elicitation/create` forms (`ask_user`)."""

    @property
    def plans(self) -> bool:
        return self.plan is not None

    @property
    def elicits(self) -> bool:
        return isinstance(self.elicitation, dict) and isinstance(self.elicitation.get("form"), dict)

    @property
    def notices(self) -> bool:
        return self.session is not None and self.session.notices is not None

    @property
    def compaction(self) -> bool:
        return self.session is not None and self.session.compaction is not None

    @property
    def child_sessions(self) -> bool:
        return self.subagents is not None


class InitializeParams(Incoming):
    protocol_version: int
    client_capabilities: ClientCapabilities = ClientCapabilities()


class PromptCapabilities(Model):
    image: bool = False
    audio: bool = False
    embedded_context: bool = False


class Supported(Model):
    """An empty object: the capability is offered (`{}`), with no options."""


class SystemPromptModes(Model):
    override: Supported | None = None


class SystemPromptCapabilities(Model):
    """Unstable: `systemPrompt` on new, load and resume (`append`; `override` when `mode` says so)."""

    mode: SystemPromptModes | None = None


class SessionCapabilities(Model):
    """The session lifecycle methods offered beyond the baseline (`session/load` has its own flag)."""

    list: Supported | None = None
    resume: Supported | None = None
    close: Supported | None = None
    delete: Supported | None = None
    additional_directories: Supported | None = None
    """`additionalDirectories` on new, load, resume and fork."""
    title: Supported | None = None
    """Unstable: `session/set_title`."""
    system_prompt: SystemPromptCapabilities | None = None
    fork: Supported | None = None
    """Unstable: `session/fork`."""


class AgentAuthCapabilities(Model):
    logout: Supported | None = None


class McpCapabilities(Model):
    http: bool = False
    sse: bool = False


class AgentCapabilities(Model):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = PromptCapabilities()
    mcp_capabilities: McpCapabilities | None = None
    session_capabilities: SessionCapabilities = SessionCapabilities()
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    auth: AgentAuthCapabilities | None = None


class Implementation(Model):
    name: str
    title: str | None = None
    version: str


class TerminalAuthMethod(Model):
    """A sign-in the client runs as the agent's own command plus `args`, in a terminal; exit
    status 0 means signed in. It is never passed to `authenticate`."""

    type: Literal["terminal"] = "terminal"
    id: str
    name: str
    description: str | None = None
    args: list[str] = []


class InitializeResult(Model):
    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: Implementation
    auth_methods: list[TerminalAuthMethod] = []
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AuthenticateParams(Incoming):
    method_id: str


class LogoutParams(Incoming):
    pass


# -- sessions --------------------------------------------------------------------------------


class SystemPrompt(Incoming):
    """Unstable: the client's system-level instructions for a session. `mode` is kept as sent
    (an unknown one is refused by name); `content` is checked by the server (text blocks only)."""

    mode: str
    content: list[dict[str, Any]]


class NewSessionParams(Incoming):
    cwd: str
    mcp_servers: list[dict[str, Any]]
    additional_directories: list[str] | None = None
    system_prompt: SystemPrompt | None = None


class NewSessionResult(Model):
    session_id: str
    modes: SessionModeState | None = None
    config_options: list[SessionConfigSelect] | None = None


class PromptParams(Incoming):
    session_id: str
    prompt: list[dict[str, Any]]


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptResult(Model):
    stop_reason: StopReason


class CancelParams(Incoming):
    session_id: str


# -- session lifecycle: load, list, resume, close --------------------------------------------


class LoadSessionParams(Incoming):
    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]]
    additional_directories: list[str] | None = None
    system_prompt: SystemPrompt | None = None


class ResumeSessionParams(Incoming):
    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]] = []
    additional_directories: list[str] | None = None
    system_prompt: SystemPrompt | None = None


class ForkSessionParams(Incoming):
    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]] = []
    additional_directories: list[str] | None = None
    system_prompt: SystemPrompt | None = None


class ForkSessionResult(Model):
    session_id: str
    modes: SessionModeState | None = None
    config_options: list[SessionConfigSelect] | None = None


class OpenSessionResult(Model):
    """The answer to `session/load` and `session/resume`: the session's modes and config options,
    with the values it was left with."""

    modes: SessionModeState | None = None
    config_options: list[SessionConfigSelect] | None = None


class ListSessionsParams(Incoming):
    cwd: str | None = None
    cursor: str | None = None


class SessionInfo(Model):
    session_id: str
    cwd: str
    additional_directories: list[str] | None = None
    """The additional roots the session's log holds last (omitted: none)."""
    title: str | None = None
    updated_at: str | None = None
    """ISO 8601, UTC."""


class ListSessionsResult(Model):
    sessions: list[SessionInfo]
    next_cursor: str | None = None


class CloseSessionParams(Incoming):
    session_id: str


class CloseSessionResult(Model):
    pass


class DeleteSessionParams(Incoming):
    session_id: str


class DeleteSessionResult(Model):
    pass


class SteeringParams(Incoming):
    """`_session/steering` (an extension peers share): a message for the running turn."""

    session_id: str
    prompt: list[dict[str, Any]]
    idle_behavior: str | None = None
    """`promptRequired`: refuse when no turn runs; anything else (or none): start one."""


class SteeringResult(Model):
    outcome: Literal["injected", "startedNewTurn", "promptRequired"]
    reason: Literal["noRunningTurn"] | None = None


class SetSessionTitleParams(Incoming):
    session_id: str
    title: str


class SetSessionTitleResult(Model):
    title: str
    """The title stored: the one asked for, normalized (`one_line`)."""


# -- session/update --------------------------------------------------------------------------


class Text(Model):
    type: Literal["text"] = "text"
    text: str


class ResourceLink(Model):
    """A `resource_link` content block (a user message's attachment, replayed by `session/load`)."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


class TextResourceContents(Model):
    uri: str
    text: str
    mime_type: str | None = None


class BlobResourceContents(Model):
    uri: str
    blob: str
    """Base64."""
    mime_type: str | None = None


class EmbeddedResource(Model):
    """A `resource` content block: a file the user attached with its contents (`embeddedContext`)."""

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents


class Image(Model):
    """An `image` content block (a user message's image, replayed by `session/load`)."""

    type: Literal["image"] = "image"
    data: str
    """Base64."""
    mime_type: str
    uri: str | None = None


class ContentChunk(Model):
    session_update: Literal["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]
    content: Annotated[Text | ResourceLink | EmbeddedResource | Image, Field(discriminator="type")]


class ImageBlock(Model):
    type: Literal["image"] = "image"
    data: str
    """Base64."""
    mime_type: str


class ToolCallContent(Model):
    """Tool call content of type `content`: a content block shown in the tool call card."""

    type: Literal["content"] = "content"
    content: Annotated[Text | ImageBlock, Field(discriminator="type")]


class ToolCallDiff(Model):
    """Tool call content of type `diff`: a file's whole text before (absent for a new file) and after."""

    type: Literal["diff"] = "diff"
    path: str
    old_text: str | None = None
    new_text: str


class ToolCallTerminal(Model):
    """Tool call content of type `terminal`: an editor terminal (`terminal/create`) shown live."""

    type: Literal["terminal"] = "terminal"
    terminal_id: str


ToolCallContentItem = Annotated[ToolCallContent | ToolCallDiff | ToolCallTerminal, Field(discriminator="type")]


class ToolCallLocation(Model):
    path: str
    line: int | None = None


ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class ToolCallStart(Model):
    session_update: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    title: str
    name: str | None = None
    kind: ToolKind
    status: ToolCallStatus
    raw_input: Any = None
    content: list[ToolCallContentItem] | None = None
    locations: list[ToolCallLocation] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolCallProgress(Model):
    session_update: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolCallStatus | None = None
    content: list[ToolCallContentItem] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_output: Any = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PlanEntry(Model):
    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]


class Plan(Model):
    """The agent's whole plan: the client replaces the one it shows with each update."""

    session_update: Literal["plan"] = "plan"
    entries: list[PlanEntry]


class PlanItems(Model):
    """Unstable: a plan of entries, identified by its id within the session."""

    type: Literal["items"] = "items"
    plan_id: str
    entries: list[PlanEntry]


class PlanUpdate(Model):
    """Unstable: the plan of that id now stands as `plan` (for a client advertising `plan`)."""

    session_update: Literal["plan_update"] = "plan_update"
    plan: PlanItems


class PlanRemoved(Model):
    """Unstable: the plan of that id is gone (for a client advertising `plan`)."""

    session_update: Literal["plan_removed"] = "plan_removed"
    plan_id: str


class Cost(Model):
    amount: float
    currency: str


class UsageUpdate(Model):
    """How full the model's context is after a model call, and what the session cost so far when
    its models declare prices."""

    session_update: Literal["usage_update"] = "usage_update"
    used: int
    """Tokens in the context after the call: its input (cached or not) and its output."""
    size: int
    """The context window, in tokens."""
    cost: Cost | None = None
    """The session's calls so far (those of the latest call's currency), from their logged costs."""


class SessionInfoUpdate(Model):
    """Session metadata: the title (the first prompt's, as `session/list` shows it)."""

    session_update: Literal["session_info_update"] = "session_info_update"
    title: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


# -- session modes and config options -------------------------------------------------------


class SessionMode(Model):
    id: str
    name: str
    description: str | None = None


class SessionModeState(Model):
    current_mode_id: str
    available_modes: list[SessionMode]


class SessionConfigSelectOption(Model):
    value: str
    name: str
    description: str | None = None


class SessionConfigSelect(Model):
    """A `select` session config option (a dropdown) and its current value."""

    id: str
    name: str
    description: str | None = None
    category: str | None = None
    """`mode`, `model`, `thought_level`, ... (UX only)."""
    type: Literal["select"] = "select"
    current_value: str
    options: list[SessionConfigSelectOption]


class SetSessionModeParams(Incoming):
    session_id: str
    mode_id: str


class SetSessionConfigOptionParams(Incoming):
    """A value id for a `select` option, or a boolean for a `boolean` one (`type: "boolean"`);
    this agent offers only selects, so a boolean is refused with a message naming the option."""

    session_id: str
    config_id: str
    value: str | bool


class SetSessionConfigOptionResult(Model):
    config_options: list[SessionConfigSelect]


class CurrentModeUpdate(Model):
    session_update: Literal["current_mode_update"] = "current_mode_update"
    current_mode_id: str


class ConfigOptionUpdate(Model):
    """Every config option with its current value."""

    session_update: Literal["config_option_update"] = "config_option_update"
    config_options: list[SessionConfigSelect]


class UnstructuredCommandInput(Model):
    """A command takes what is typed after its name; `hint` shows until something is."""

    hint: str


class AvailableCommand(Model):
    name: str
    description: str
    input: UnstructuredCommandInput | None = None


class AvailableCommandsUpdate(Model):
    """The session's slash commands, in full (each update replaces the list)."""

    session_update: Literal["available_commands_update"] = "available_commands_update"
    available_commands: list[AvailableCommand]


class Notice(Model):
    """Fire-and-forget information for the user (only to a client advertising
    `session.notices`)."""

    session_update: Literal["notice"] = "notice"
    severity: Literal["info", "warning", "error"]
    title: str
    description: str | None = None


CompactionStatus = Literal["in_progress", "completed", "failed", "cancelled"]


class CompactionUpdate(Model):
    """A context compaction, created (its first update fixes its place in the thread) or patched
    by id (only to a client advertising `session.compaction`). An omitted `summary` or `error`
    leaves the one shown unchanged."""

    session_update: Literal["compaction_update"] = "compaction_update"
    compaction_id: str
    status: CompactionStatus
    summary: list[Text] | None = None
    error: str | None = None


class CompactionSummaryChunk(Model):
    """A piece of a compaction's summary as it streams (only to a client advertising
    `session.compaction`)."""

    session_update: Literal["compaction_summary_chunk"] = "compaction_summary_chunk"
    compaction_id: str
    content: Text


# -- child sessions (only to a client advertising `subagents`) ------------------------------


class SubagentCancel(Model):
    """`cancel: {}`: the client may `session/cancel` the child's current work."""


class SubagentSessionCapabilities(Model):
    cancel: SubagentCancel | None = None


class Error(Model):
    """A JSON-RPC error object (a failed child's end state carries one)."""

    code: int
    message: str
    data: Any = None


class SubagentUsage(Model):
    """Tokens a child's run used, over all its model calls."""

    total_tokens: int
    input_tokens: int
    output_tokens: int
    thought_tokens: int | None = None
    cached_read_tokens: int | None = None


class SubagentRunning(Model):
    state: Literal["running"] = "running"


class SubagentRequiresAction(Model):
    """The child waits for the user (a permission request)."""

    state: Literal["requires_action"] = "requires_action"


SubagentStopReason = StopReason | Literal["error"]


class SubagentIdle(Model):
    """The child's run is over: why, what it used, and (`error`) how it failed."""

    state: Literal["idle"] = "idle"
    stop_reason: SubagentStopReason
    usage: SubagentUsage
    error: Error | None = None


SubagentState = Annotated[SubagentRunning | SubagentRequiresAction | SubagentIdle, Field(discriminator="state")]


class SubagentUpdate(Model):
    """A child session announced (the first one), or its state and capabilities patched, on its
    immediate parent's session. `capabilities` set to None goes out as `null` (cleared: the child
    accepts no more mutations), unlike the other fields, which are left out when unset."""

    session_update: Literal["subagent_update"] = "subagent_update"
    session_id: str
    title: str | None = None
    description: str | None = None
    cwd: str | None = None
    capabilities: SubagentSessionCapabilities | None = None
    state: SubagentState | None = None

    @model_serializer(mode="wrap")
    def _explicit_null(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if "capabilities" not in self.model_fields_set or self.capabilities is not None:
            return out
        order = ["sessionUpdate", "sessionId", "title", "description", "cwd", "capabilities", "state"]
        return {key: out.get(key) for key in order if key in out or key == "capabilities"}


MessageBlock = Annotated[Text | ResourceLink | EmbeddedResource | Image, Field(discriminator="type")]


class SessionMessage(Model):
    """One view of a message between two sessions: the sender's (`recipient_message_id` names the
    recipient's view) or the recipient's (`sender_message_id` names the sender's)."""

    session_update: Literal["session_message"] = "session_message"
    message_id: str
    sender_session_id: str
    recipient_session_id: str
    sender_message_id: str | None = None
    recipient_message_id: str | None = None
    content: list[MessageBlock] | None = None


class SessionMessageChunk(Model):
    """A content block appended to a message between sessions."""

    session_update: Literal["session_message_chunk"] = "session_message_chunk"
    message_id: str
    content: MessageBlock


SessionUpdate = Annotated[
    ContentChunk
    | ToolCallStart
    | ToolCallProgress
    | Plan
    | PlanUpdate
    | PlanRemoved
    | UsageUpdate
    | SessionInfoUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | AvailableCommandsUpdate
    | Notice
    | CompactionUpdate
    | CompactionSummaryChunk
    | SubagentUpdate
    | SessionMessage
    | SessionMessageChunk,
    Field(discriminator="session_update"),
]


class SessionNotification(Model):
    """The params of a `session/update`. The server joins them from the update's own dump
    (`Wire.update`) rather than through this model, whose validator covers every update type;
    the tests hold what goes out against it."""

    session_id: str
    update: SessionUpdate


# -- agent -> client: the editor's file system and terminals -----------------------------------
# Params go out exactly as modelled; results come in leniently (unknown fields ignored).


class ReadTextFileParams(Model):
    session_id: str
    path: str
    """Absolute."""
    line: int | None = None
    limit: int | None = None


class ReadTextFileResult(Incoming):
    content: str


class WriteTextFileParams(Model):
    session_id: str
    path: str
    """Absolute."""
    content: str


class EnvVariable(Model):
    name: str
    value: str


class CreateTerminalParams(Model):
    session_id: str
    command: str
    args: list[str] = []
    env: list[EnvVariable] | None = None
    cwd: str | None = None
    output_byte_limit: int | None = None


class CreateTerminalResult(Incoming):
    terminal_id: str


class TerminalParams(Model):
    """The params of `terminal/output`, `terminal/wait_for_exit`, `terminal/kill` and
    `terminal/release`: one terminal of one session."""

    session_id: str
    terminal_id: str


class TerminalExitStatus(Incoming):
    """How a terminal's command ended (the answer to `terminal/wait_for_exit`)."""

    exit_code: int | None = None
    signal: str | None = None


class TerminalOutputResult(Incoming):
    output: str
    truncated: bool
    exit_status: TerminalExitStatus | None = None


# -- agent -> client: permission -----------------------------------------------------------------


class PermissionOption(Model):
    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class PermissionToolCall(Model):
    """The call asked about (an ACP `ToolCallUpdate`): its wire id and what its card shows."""

    tool_call_id: str
    title: str | None = None
    name: str | None = None
    kind: ToolKind | None = None
    status: ToolCallStatus | None = None
    raw_input: Any = None
    content: list[ToolCallContentItem] | None = None
    locations: list[ToolCallLocation] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class RequestPermissionParams(Model):
    session_id: str
    tool_call: PermissionToolCall
    options: list[PermissionOption]


class SelectedOutcome(Incoming):
    outcome: Literal["selected"]
    option_id: str


class CancelledOutcome(Incoming):
    outcome: Literal["cancelled"]


class RequestPermissionResult(Incoming):
    outcome: Annotated[SelectedOutcome | CancelledOutcome, Field(discriminator="outcome")]
