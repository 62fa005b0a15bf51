"""The file tools `read_file`, `write_file` and `edit_file`, and the plugin that registers them.

A path is taken relative to the session's cwd (or absolute) and must stay inside the cwd once
resolved: a `..` or a symbolic link that leads out is refused (`confined.py`). By an absolute path,
they also reach the session's additional roots (`roots.py`, through the call's workspace as the
cwd), and `write_file` and `edit_file` the other roots a sandboxed `workspace-write` command may
write in (the session's private temporary directory, the sandbox's `extraWritable`:
`sandboxing.writable_roots`), and `read_file` those and the scratch directory's overflow files, on
the disk. Files are read and written through
the call's `Workspace` (the disk unless a `workspace` service picks another). Each call shows the
editor the file it works on (a location, with the line when known) and, for writes and edits, the
change (a diff of the whole text).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import TypeVar

from pydantic import Field

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.tools import reads, texts
from acp_agent.tools.base import (
    Diff,
    Location,
    Tool,
    ToolCallContext,
    ToolParams,
    ToolPresentation,
    ToolPreview,
    ToolResult,
    code_block,
)
from acp_agent.tools.confined import Target, resolve_among
from acp_agent.tools.errors import BinaryFile, NotOwned, OutsideWorkspace, ScratchGone
from acp_agent.tools.lines import Window
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.sandboxing import writable_roots
from acp_agent.tools.scratch import resolve_readable
from acp_agent.tools.workspace import DISK, Workspace, workspace_for

# The parameter models' field descriptions are model-visible (the schema sent with every request).


class PathParams(ToolParams):
    """Arguments naming one file."""

    path: str = Field(description=texts.PATH_DESCRIPTION)


class ReadFileParams(PathParams):
    """Arguments of read_file."""

    offset: int | None = Field(default=None, ge=1, description="The 1-based line to start at (default 1).")
    limit: int | None = Field(
        default=None, ge=1, description="How many lines to read (default: as many as a call returns)."
    )


class WriteFileParams(PathParams):
    """Arguments of write_file."""

    content: str = Field(description="The whole new content of the file.")


class EditFileParams(PathParams):
    """Arguments of edit_file."""

    old_text: str = Field(
        min_length=1,
        description="The exact text to replace, whitespace and indentation included (no line numbers).",
    )
    new_text: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence; otherwise old_text must occur exactly once."
    )


ParamsT = TypeVar("ParamsT", bound=PathParams)


class FileTool(Tool[ParamsT]):
    """A tool working on the one file its `path` names: resolves and checks the path, and turns
    file errors into results the model can act on."""

    @abstractmethod
    def resolve(self, call: ToolCallContext, path: str) -> tuple[Target, bool]:
        """The checked target `path` names, and whether it lies outside the session's roots (then it
        is on the disk whatever the call's workspace: the editor holds the roots' files only)."""

    async def run(self, params: ParamsT, call: ToolCallContext) -> ToolResult:
        try:
            target, in_scratch = self.resolve(call, params.path)
        except OutsideWorkspace as exc:
            return ToolResult.failure(str(exc), "outside_workspace")
        except ScratchGone:
            return ToolResult.failure(texts.scratch_gone(params.path), "not_found")
        except OSError as exc:  # a symbolic link loop, a directory it may not search
            return _file_failure(exc, params.path)
        try:
            return await self.run_on(target, params, DISK if in_scratch else workspace_for(call), call)
        except (OSError, UnicodeDecodeError, BinaryFile) as exc:
            return _file_failure(exc, target.shown)

    @abstractmethod
    async def run_on(self, target: Target, params: ParamsT, workspace: Workspace, call: ToolCallContext) -> ToolResult:
        """Do the work on the checked `target`; file errors may propagate."""


@dataclass(frozen=True)
class Change:
    """A file's text before (None: no file yet) and after a write or an edit, and where it starts."""

    old: str | None
    new: str
    line: int | None = None
    count: int = 1
    """The occurrences an edit replaces."""


class ChangeTool(FileTool[ParamsT]):
    """A file tool that changes its file: it works the change out (`change`), then writes it and
    shows it; `preview` shows the same change before anything is written (for an approval)."""

    needs_approval = True
    edits_files = True

    def __init__(self, *, read_first: bool = False) -> None:
        self.read_first = read_first
        """Refuse an existing file the agent has not read in this session, or that changed since
        (`reads.py`); the `files` row turns it on (`readBeforeWrite`)."""

    def resolve(self, call: ToolCallContext, path: str) -> tuple[Target, bool]:
        target = resolve_writable(call, path)
        return target, on_disk(call, target)

    @abstractmethod
    async def change(self, target: Target, params: ParamsT, workspace: Workspace) -> Change | ToolResult:
        """The change the call makes, or the failure that refuses it; file errors may propagate."""

    @abstractmethod
    def report(self, target: Target, change: Change) -> str:
        """What the model reads once the change is written."""

    async def run_on(self, target: Target, params: ParamsT, workspace: Workspace, call: ToolCallContext) -> ToolResult:
        refused = reads.refusal(call, target) if self.read_first else None
        if refused is not None:
            return refused
        change = await self.change(target, params, workspace)
        if isinstance(change, ToolResult):
            return change
        await workspace.write_text(target, change.new)
        reads.remember(call, target)
        shown = change_view(target, change)
        call.show(locations=shown.locations, diffs=shown.diffs, notes=shown.notes)
        return ToolResult.text(self.report(target, change))

    async def preview(self, params: ParamsT, call: ToolCallContext) -> ToolPreview | None:
        try:
            target = self.resolve(call, params.path)[0]
            if self.read_first and reads.refusal(call, target) is not None:
                return None
            change = await self.change(target, params, workspace_for(call))
        except (OutsideWorkspace, OSError, UnicodeDecodeError, BinaryFile):
            return None  # the call says why when it runs
        return None if isinstance(change, ToolResult) else change_view(target, change)


def resolve_for_reading(call: ToolCallContext, path: str) -> tuple[Target, bool]:
    """Where a reading tool finds `path`: the cwd, the session's scratch directory (an overflowed
    output), then the session's additional roots and the other roots the file tools may write in
    (so a file there can be read before it is changed); and whether it is on the disk whatever
    the call's workspace (`FileTool.resolve`)."""
    try:
        return resolve_readable(call, path)
    except OutsideWorkspace:
        target = resolve_writable(call, path)
        return target, on_disk(call, target)


def resolve_writable(call: ToolCallContext, path: str) -> Target:
    """`resolve_among` the roots a `workspace-write` command may write in (`writable_roots`); the
    refusal of a path outside them names the session's roots: all of them when it has
    additional ones (the cwd alone: the working directory)."""
    try:
        return resolve_among(writable_roots(call), path)
    except OutsideWorkspace as exc:
        if not call.roots.additional:
            raise
        raise exc.among(call.roots.all) from None


def on_disk(call: ToolCallContext, target: Target) -> bool:
    """Whether `target` lies outside the session's roots (the scratch directory, a deployment's
    `extraWritable`): the editor holds the files of the cwd and of the additional roots only."""
    return target.other_root and target.cwd not in call.roots.additional


class ReadFileTool(FileTool[ReadFileParams]):
    """Returns a window of a text file's lines, numbered."""

    name = "read_file"
    Params = ReadFileParams
    concurrency_safe = True

    def resolve(self, call: ToolCallContext, path: str) -> tuple[Target, bool]:
        return resolve_for_reading(call, path)

    def __init__(self, *, max_lines: int = 2000, max_line_chars: int = 2000) -> None:
        self.max_lines = max_lines
        self.max_line_chars = max_line_chars
        self.description = texts.read_description(max_lines, max_line_chars)

    async def run_on(
        self, target: Target, params: ReadFileParams, workspace: Workspace, call: ToolCallContext
    ) -> ToolResult:
        start = params.offset or 1
        window = Window(start, min(params.limit or self.max_lines, self.max_lines), self.max_line_chars)
        found = await workspace.read_lines(target, window)
        reads.remember(call, target)
        if not found.lines and start > 1:
            return ToolResult.failure(texts.past_the_end(start, target.shown, found.total), "offset_out_of_range")
        call.show(locations=[Location(path=str(target.path), line=start)])
        if not found.lines:
            return ToolResult.text(texts.EMPTY_FILE)
        out = [f"{number:>6}\t{line}" for number, line in enumerate(found.lines, start)]
        end = start + len(found.lines) - 1
        if found.full:
            out.append(texts.read_limit(start, end))
        elif found.more:
            out.append(texts.more_lines(start, end))
        elif start > 1:
            out.append(texts.last_lines(start, end))
        return ToolResult.text("\n".join(out))

    def present(self, params: ReadFileParams) -> ToolPresentation:
        window = ""
        if params.offset or params.limit:
            start = params.offset or 1
            window = f" (lines {start}-{start + params.limit - 1})" if params.limit else f" (from line {start})"
        return ToolPresentation(title=f"Read {params.path}{window}", kind="read")

    def render_result(self, result: ToolResult) -> list[str]:
        return [code_block(result.plain_text())]


class WriteFileTool(ChangeTool[WriteFileParams]):
    """Creates a file or replaces its whole content."""

    name = "write_file"
    description = (
        "Create a text file, or replace the whole content of an existing one. Missing parent "
        "directories are created. To change part of a file, use edit_file."
    )
    Params = WriteFileParams

    async def change(self, target: Target, params: WriteFileParams, workspace: Workspace) -> Change:
        try:
            old: str | None = await workspace.read_text(target)
        except FileNotFoundError:
            old = None
        return Change(old, params.content)

    def report(self, target: Target, change: Change) -> str:
        return texts.written(target.shown, change.old is None, len(split_lines(change.new)))

    def present(self, params: WriteFileParams) -> ToolPresentation:
        return ToolPresentation(title=f"Write {params.path}", kind="edit")


class EditFileTool(ChangeTool[EditFileParams]):
    """Replaces an exact piece of text in a file."""

    name = "edit_file"
    description = (
        "Replace an exact piece of text in a file. `old_text` must match the file exactly, "
        "whitespace and indentation included (without read_file's line numbers), and occur exactly "
        "once: include enough surrounding lines to make it unique, or set `replace_all` to replace "
        "every occurrence."
    )
    Params = EditFileParams

    async def change(self, target: Target, params: EditFileParams, workspace: Workspace) -> Change | ToolResult:
        if params.old_text == params.new_text:
            return ToolResult.failure(texts.NO_CHANGE, "no_change")
        text = await workspace.read_text(target)
        count = text.count(params.old_text)
        if not count:
            return ToolResult.failure(texts.no_match(target.shown), "no_match")
        if count > 1 and not params.replace_all:
            return ToolResult.failure(texts.ambiguous(target.shown, count), "ambiguous_match")
        new = text.replace(params.old_text, params.new_text)  # count is 1 unless replace_all
        line = text.count("\n", 0, text.index(params.old_text)) + 1
        return Change(text, new, line, count)

    def report(self, target: Target, change: Change) -> str:
        assert change.line is not None  # an edit knows where it starts
        return texts.edited(target.shown, change.count, change.line)

    def present(self, params: EditFileParams) -> ToolPresentation:
        return ToolPresentation(title=f"Edit {params.path}", kind="edit")


def split_lines(text: str) -> list[str]:
    """The lines of `text`, split at `\\n` only (as editors number them); a final newline ends
    the last line rather than starting an empty one."""
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    return lines


def change_view(target: Target, change: Change) -> ToolPreview:
    """How the editor sees a file's change: the file, and a diff of the whole text, or a note in
    its place when the text before or after is over `texts.DIFF_BYTES` (a diff would carry it
    whole, twice)."""
    path = str(target.path)
    locations = [Location(path=path, line=change.line)]
    old_size = None if change.old is None else len(change.old.encode("utf-8"))
    new_size = len(change.new.encode("utf-8"))
    if max(old_size or 0, new_size) > texts.DIFF_BYTES:
        return ToolPreview(locations=locations, notes=[texts.diff_too_large(target.shown, old_size, new_size)])
    return ToolPreview(locations=locations, diffs=[Diff(path=path, old_text=change.old, new_text=change.new)])


def _file_failure(exc: OSError | UnicodeDecodeError | BinaryFile, shown: str) -> ToolResult:
    if isinstance(exc, BinaryFile):
        return ToolResult.failure(texts.binary(shown), "not_text")
    if isinstance(exc, UnicodeDecodeError):
        return ToolResult.failure(texts.not_text(shown), "not_text")
    if isinstance(exc, FileNotFoundError):
        return ToolResult.failure(texts.not_found(shown), "not_found")
    if isinstance(exc, NotOwned):
        return ToolResult.failure(texts.not_owned(shown), "not_owned")
    if isinstance(exc, IsADirectoryError):
        return ToolResult.failure(texts.is_a_directory(shown), "is_a_directory")
    return ToolResult.failure(texts.io_error(shown, exc.strerror or str(exc)), "io_error")


# The plugin: module attributes, as the loader expects.
name = "files"
inject = ("tools",)


class Config(PluginConfig):
    """Configuration of the `files` plugin row."""

    max_lines: int = Field(default=2000, gt=0)
    """The most lines one read_file call returns."""
    max_line_chars: int = Field(default=2000, gt=0)
    """Longer lines are cut in read_file's result."""
    read_before_write: bool = True
    """edit_file, and write_file over an existing file, refuse a file the agent has not read in
    its session or that changed on disk since it read it."""


def apply(ctx: Context, config: Config) -> Disposer:
    """Register read_file, write_file and edit_file for every agent."""
    read = ReadFileTool(max_lines=config.max_lines, max_line_chars=config.max_line_chars)
    first = config.read_before_write
    tools = (read, WriteFileTool(read_first=first), EditFileTool(read_first=first))
    return combine(*(ctx.get(TOOLS).register(tool) for tool in tools))
