"""What a tool is: its parameters model, how it runs, how the editor shows it, what it returns."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_json

from acp_agent.kernel.context import Context, ServiceKey
from acp_agent.kernel.events import EventKey
from acp_agent.kernel.models import Model
from acp_agent.kernel.scope import Disposer, Scope
from acp_agent.llm.request import ToolSchema
from acp_agent.sandbox.policy import Kind
from acp_agent.session.content import ContentBlock, TextContent
from acp_agent.session.events import SessionEvent, ToolError
from acp_agent.tools.roots import Roots, roots_of

if TYPE_CHECKING:
    from acp_agent.session.log import Session

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""The ACP tool kinds: the editor picks an icon and a treatment from it."""


class ToolParams(BaseModel):
    """The base of a tool's parameters model: its validator and schema are built at the first call
    or model request that needs them, not when the tool's module is imported (at start-up)."""

    model_config = ConfigDict(defer_build=True)


ParamsT = TypeVar("ParamsT", bound=BaseModel)
PickedT = TypeVar("PickedT")


class Location(Model):
    """A file (and optionally a 1-based line) a tool call touches, for the editor to follow."""

    path: str
    line: int | None = None


class Diff(Model):
    """A change to a file, for the editor to show: the whole text before and after."""

    path: str
    """Absolute."""
    old_text: str | None = None
    """None: the file did not exist."""
    new_text: str


class Image(Model):
    """An image a tool shows the user on its card (base64 `data`)."""

    data: str
    mime_type: str


class ToolPresentation(Model):
    """How the editor shows a tool call before it has a result."""

    title: str
    kind: ToolKind = "other"
    content: list[str] = Field(default_factory=list)
    """Plain text paragraphs shown under the title."""
    locations: list[Location] = Field(default_factory=list)
    name: str | None = None
    """The tool's programmatic name for the editor (ACP `ToolCall.name`), when it says more than
    the title (a tool of an MCP server)."""
    meta: dict[str, Any] | None = None
    """Entries of the card's `_meta` under the project's key (the MCP server and tool, say)."""


class GrantScope(NamedTuple):
    """A part of a call the user may allow for the rest of the session, beside the whole tool
    (web_fetch: the URL's host): what grants are kept by, and the option's label."""

    key: str
    label: str


class ToolPreview(Model):
    """What a call would show of its change before it runs (for the user asked to approve it)."""

    locations: list[Location] = Field(default_factory=list)
    diffs: list[Diff] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    """Text in place of a diff (a change too large to show as one)."""


RAW_OUTPUT_LIMIT = 256 * 1024
"""The most a result's `rawOutput` may weigh as JSON: tools bound theirs like the model's copy;
this is the backstop for any tool that does not."""


def bounded_raw_output(raw_output: Any) -> Any:
    """`raw_output` as it is when it can be written and weighs at most `RAW_OUTPUT_LIMIT` bytes
    as JSON; else a note saying why it is not shown (never tens of MB in the log and on the wire,
    never a value the log's serializer would refuse: too deep, or text that is not Unicode)."""
    if raw_output is None:
        return None
    try:
        size = len(to_json(raw_output))
    except Exception as exc:  # the serializer's refusal, whatever its kind
        return f"[raw output not shown: it cannot be written as JSON ({_first_line(exc)})]"
    return (
        raw_output
        if size <= RAW_OUTPUT_LIMIT
        else f"[raw output not shown: {size} bytes, more than {RAW_OUTPUT_LIMIT}]"
    )


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class ToolResult(Model):
    """What a tool call gives back to the model (and, rendered, to the editor)."""

    content: list[ContentBlock]
    is_error: bool = False
    error: ToolError | None = None
    raw_output: Any = None
    """What the tool produced, as it produced it (an MCP server's result; a command run in the
    editor's terminal: its output as the model reads it and its exit code), for the card's
    `rawOutput`; logged, never model-visible."""
    ends_turn: bool = Field(default=False, exclude=True)
    """A successful result that is the turn's last word: no further model call follows it.
    (Not logged: the log shows the result; the turn's end shows the effect.)"""

    @classmethod
    def text(cls, text: str) -> ToolResult:
        """A successful result holding one text block."""
        return cls(content=[TextContent(text=text)])

    @classmethod
    def failure(cls, message: str, code: str) -> ToolResult:
        """An error result: the model reads `Error: <message>`, the log also keeps the code."""
        return cls(
            content=[TextContent(text=f"Error: {message}")],
            is_error=True,
            error=ToolError(code=code, message=message),
        )

    def plain_text(self) -> str:
        """The text blocks joined by newlines (other blocks have no text to show)."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


DISPLAY_EVENT: Final = "tool/display"


class ToolDisplayData(Model):
    """What a running call adds to the editor's view of it: where it works, what it changed."""

    call_id: str
    locations: list[Location] | None = None
    diffs: list[Diff] | None = None
    terminal_id: str | None = None
    """An editor terminal the call runs in (ACP `terminal/create`), to embed in the call's view."""
    notes: list[str] | None = None
    """Text for the call's view, kept like the diffs (a change too large to show as a diff)."""
    images: list[Image] | None = None
    """Images the call shows the user (an MCP tool's image result)."""


class ToolDisplayEvent(SessionEvent):
    """`tool/display`: registered by the tools plugin (invariant class "turn"); not model-visible."""

    type: Literal["tool/display"] = DISPLAY_EVENT
    data: ToolDisplayData


class CallerOptions(Protocol):
    """The calling agent's settings, as tools read them."""

    @property
    def model(self) -> str:
        """The model the agent's calls go to (a tool that needs a capability of it checks it)."""
        ...


class CallingAgent(Protocol):
    """The agent making a tool call, as tools see it: what they read of it, and a key of the
    per-agent tables they keep (hashable, by identity). The agent package's `Agent` is one; a
    tool or service above that package which passes the caller on as an `Agent` (a child's
    parent, the approval gate) narrows it with `acp_agent.agent.calling.calling_agent`."""

    @property
    def id(self) -> str:
        """Its session's id."""
        ...

    @property
    def route(self) -> str: ...

    @property
    def session(self) -> Session: ...

    @property
    def scope(self) -> Scope:
        """Registrations made here vanish with the agent."""
        ...

    @property
    def ctx(self) -> Context: ...

    @property
    def options(self) -> CallerOptions: ...

    @property
    def takes_images(self) -> bool:
        """Whether the model its calls go to takes images (a tool returning one checks it)."""
        ...

    def add_prompt_section(self, order: int, name: str, text: str) -> Disposer:
        """Add text of the caller's to its own system prompt (sent as it is, never filled in),
        for as long as the agent lives; the disposer removes it sooner."""
        ...


BEFORE_MODEL_CALL: Final[EventKey[Callable[[CallingAgent], Awaitable[object]]]] = EventKey("agent/before-model-call")
"""Awaited (`parallel`) by the agent loop (`agent/loop.py`) with the agent inside each step, right
before the model request is built: a listener may hold the call (tools still connecting) and log
what the call will see (the background jobs' end notices, a background child's). Keyed here, below
the agent package, so that tool packages listen to it too; a listener above that package that
needs the `Agent` narrows its caller (`agent.calling.as_agent`)."""


@dataclass
class ToolCallContext:
    """Who is calling and where: what a running tool may know about its call.

    It carries the calling agent itself, so nothing below turns a session id back into the
    object the loop already held.
    """

    call_id: str
    cwd: Path
    agent: CallingAgent
    sandbox: Kind | None = None
    """The file policy the call's commands run under, set by the approval gate (None: no gate
    ruled; `tools.sandboxing.policy_kind` says what then applies)."""

    @property
    def session(self) -> Session:
        """The calling agent's session log, where a tool logs what it reports as events."""
        return self.agent.session

    @property
    def route(self) -> str:
        return self.agent.route

    @property
    def roots(self) -> Roots:
        """The calling agent's roots: its cwd and the additional directories its client named."""
        return roots_of(self.agent)

    @property
    def scope(self) -> Scope:
        """The calling agent's scope: registrations made here vanish with the agent."""
        return self.agent.scope

    @property
    def ctx(self) -> Context:
        return self.agent.ctx

    def show(
        self,
        *,
        locations: Sequence[Location] = (),
        diffs: Sequence[Diff] = (),
        terminal_id: str | None = None,
        notes: Sequence[str] = (),
        images: Sequence[Image] = (),
    ) -> None:
        """Show the editor, while the call runs, the files it works on, the changes it made (diffs,
        or notes about them), the editor terminal it runs in and the images it produced. Logged as
        `tool/display`; the diffs, notes, the terminal and the images stay in the call's view once
        its result is in; the raw output goes with the result."""
        data = ToolDisplayData(
            call_id=self.call_id,
            locations=list(locations) or None,
            diffs=list(diffs) or None,
            terminal_id=terminal_id,
            notes=list(notes) or None,
            images=list(images) or None,
        )
        self.session.append(ToolDisplayEvent, data)

    def pick(self, service: ServiceKey[Callable[[ToolCallContext], PickedT]], default: PickedT) -> PickedT:
        """What the context service `service` (a callable of the call, provided by a composition
        such as the ACP layer's) picks for this call; `default` when no such service is provided."""
        provider = self.ctx.find(service)
        return default if provider is None else provider(self)


class Tool(ABC, Generic[ParamsT]):
    """A tool the model can call.

    Subclasses set `name`, `description` and `Params` (the pydantic model the JSON arguments are
    validated into), usually as class attributes; a tool configured per instance may set them in
    `__init__`. `concurrency_safe` tools of one step run in parallel with each other.
    `needs_approval` tools change things outside the conversation (run commands, write files): a
    composed approval service (`acp_agent.permissions`) decides before each call whether it runs,
    may run after asking the user, or is refused. `edits_files` says which of them only edit files
    in the workspace (the `auto` mode runs those without asking); it is declared, not inferred
    from how the editor shows the call.
    """

    name: str
    description: str
    Params: type[ParamsT]
    concurrency_safe: bool = False
    needs_approval: bool = False
    edits_files: bool = False
    runs_commands: bool = False
    """Its calls run commands, which the session's mode confines (`ToolCallContext.sandbox`)."""
    only_reads: bool = False
    """It needs approval but changes nothing (web_fetch reads the network): the `auto` and `plan`
    modes run it without asking."""
    server: str | None = None
    """The MCP server the tool belongs to (None: one of the agent's own); the user may allow
    every tool of a server at once."""

    @abstractmethod
    async def run(self, params: ParamsT, call: ToolCallContext) -> ToolResult:
        """Do the work. An exception becomes an error result; cancellation must propagate."""

    def command(self, params: ParamsT) -> str | None:
        """The shell command the call runs, which the project's saved rules match (None: the tool
        runs none, the default)."""
        return None

    def escalation(self, params: ParamsT) -> str | None:
        """The justification when the call asks to run its command outside the sandbox (None: it
        does not, the default)."""
        return None

    def present(self, params: ParamsT) -> ToolPresentation:
        """How the editor shows the call (default: the tool's name, kind other)."""
        return ToolPresentation(title=self.name)

    def grant_scope(self, params: ParamsT) -> GrantScope | None:
        """What of this call the user may allow for good besides the whole tool (default: nothing)."""
        return None

    async def preview(self, params: ParamsT, call: ToolCallContext) -> ToolPreview | None:
        """The change the call would make, worked out without making it, for an approval request
        to show (a write's diff); None when there is nothing to show (the default) or the call
        would fail (it says why when it runs). Reads only."""
        return None

    def render_result(self, result: ToolResult) -> list[str]:
        """Text paragraphs the editor shows for the result (default: the result's text blocks);
        the diffs the call showed follow them."""
        return [block.text for block in result.content if isinstance(block, TextContent)]

    def schema(self) -> ToolSchema:
        """The declaration sent to the model (its parameters: `parameters_schema`)."""
        return ToolSchema(name=self.name, description=self.description, parameters=parameters_schema(self.Params))


@functools.cache
def parameters_schema(params: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a parameters model, generated once per class: pydantic generates it
    anew on every call, and every model call declares every tool. Shared by all the requests
    that declare the tool, so read-only."""
    return params.model_json_schema()


def code_block(text: str, info: str = "") -> str:
    """`text` as a fenced Markdown code block whose fence no backtick run in `text` can close."""
    if not text.endswith("\n"):
        text += "\n"
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{info}\n{text}{fence}"
