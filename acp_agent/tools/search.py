"""The search tools `glob` and `grep`, and the plugin that registers them.

Both only read, so they never ask (they need no approval, in any mode). The path is resolved like
read_file's (`files.resolve_for_reading`: inside the cwd, symbolic links included, or by an absolute
path inside the session's scratch directory or additional roots) and opened without following a
link; the engine (`searchers.py`: ripgrep, else `pysearch.py`) searches below that
descriptor and follows no symbolic link. The engine that ran goes to the log with the result
(`rawOutput.engine`), not to the model.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Literal

import anyio.to_thread
import pathspec
from pydantic import Field

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.tools import confined, texts
from acp_agent.tools.base import Location, Tool, ToolCallContext, ToolParams, ToolPresentation, ToolResult, code_block
from acp_agent.tools.confined import Target
from acp_agent.tools.errors import OutsideWorkspace, ScratchGone
from acp_agent.tools.files import resolve_for_reading
from acp_agent.tools.pysearch import PythonSearcher
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.searchers import (
    Collected,
    Engine,
    GrepQuery,
    OutputMode,
    RipgrepSearcher,
    Root,
    Searcher,
    SearchFailed,
    hidden_named,
    ripgrep_binary,
)

# The parameter models' field descriptions are model-visible (the schema sent with every request).


class GlobParams(ToolParams):
    """Arguments of glob."""

    pattern: str = Field(min_length=1, description="The glob pattern, relative to path: `**/*.py`, `src/**/test_*.ts`.")
    path: str | None = Field(
        default=None, description="The directory to search (default: the working directory)." + texts.SEARCH_PATH_NOTE
    )


class GrepParams(ToolParams):
    """Arguments of grep."""

    pattern: str = Field(min_length=1, description="The regular expression (Rust regex syntax).")
    path: str | None = Field(
        default=None,
        description="The directory or file to search (default: the working directory)." + texts.SEARCH_PATH_NOTE,
    )
    glob: str | None = Field(default=None, description="Only files matching this glob: `*.py`, `src/**/*.ts`.")
    type: str | None = Field(default=None, description="Only files of this type: `py`, `js`, `ts`, `rust`, `go`...")
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")
    context: int = Field(
        default=0, ge=0, le=20, description="Lines of context before and after each match (content mode)."
    )
    output_mode: Literal["content", "files", "count"] = Field(
        default="content", description="`content`: matching lines; `files`: paths only; `count`: matches per file."
    )
    head_limit: int | None = Field(default=None, ge=1, description="The most output lines to return (default 200).")


class SearchTool:
    """What both search tools share: the engine, and the root a call's path names."""

    concurrency_safe = True

    def __init__(self, searcher: Searcher) -> None:
        self.searcher = searcher

    async def _from_root(
        self, call: ToolCallContext, path: str | None, work: Callable[[Root], Awaitable[ToolResult]]
    ) -> ToolResult:
        try:
            target, absolute = resolve_for_reading(call, path or ".")
        except OutsideWorkspace as exc:
            return ToolResult.failure(str(exc), "outside_workspace")
        except ScratchGone:
            return ToolResult.failure(texts.scratch_gone(path or "."), "not_found")
        except OSError as exc:
            return ToolResult.failure(texts.io_error(path or ".", exc.strerror or str(exc)), "io_error")
        try:
            root = await anyio.to_thread.run_sync(_open_root, target, absolute)
        except FileNotFoundError:
            return ToolResult.failure(texts.not_found(target.shown), "not_found")
        except OSError as exc:
            return ToolResult.failure(texts.io_error(target.shown, exc.strerror or str(exc)), "io_error")
        try:
            result = await work(root)
        except SearchFailed as exc:
            result = ToolResult.failure(str(exc), "search_failed")
        finally:
            os.close(root.fd)
        return result.model_copy(update={"raw_output": {"engine": self.searcher.name}})


def _open_root(target: Target, absolute: bool) -> Root:
    if not target.parts or confined.kind(target) == "directory":
        return Root(confined.open_directory(target), True, target, absolute)
    return Root(confined.open_read(target), False, target, absolute)


class GlobTool(SearchTool, Tool[GlobParams]):
    """Finds files by a glob pattern, newest first."""

    name = "glob"
    Params = GlobParams

    def __init__(self, searcher: Searcher, *, max_results: int = 1000) -> None:
        super().__init__(searcher)
        self.max_results = max_results
        self.description = texts.glob_description(max_results)

    async def run(self, params: GlobParams, call: ToolCallContext) -> ToolResult:
        async def work(root: Root) -> ToolResult:
            if not root.is_dir:
                return ToolResult.failure(texts.not_a_directory(root.shown), "not_a_directory")
            listed = await self.searcher.files(root, hidden=hidden_named(params.pattern), call=call)
            spec = pathspec.GitIgnoreSpec.from_lines([params.pattern])
            found = [below for below in listed if spec.match_file(below)]
            if not found:
                return ToolResult.text(texts.no_files(params.pattern, root.shown))
            newest = await anyio.to_thread.run_sync(_newest_first, root.fd, found)
            shown = [root.name(below) for below in newest[: self.max_results]]
            call.show(locations=[Location(path=str(root.target.cwd / name)) for name in shown])
            lines = shown
            if len(newest) > self.max_results:
                lines = [*shown, texts.files_left_out(self.max_results, len(newest))]
            return ToolResult.text("\n".join(lines))

        return await self._from_root(call, params.path, work)

    def present(self, params: GlobParams) -> ToolPresentation:
        where = f" in {params.path}" if params.path else ""
        return ToolPresentation(title=f"Find {params.pattern}{where}", kind="search")


def _newest_first(directory: int, paths: list[str]) -> list[str]:
    """`paths` (below `directory`), the most recently modified first; equal times in path order."""

    def stamp(below: str) -> int:
        try:
            return os.stat(below, dir_fd=directory, follow_symlinks=False).st_mtime_ns
        except OSError:
            return 0  # gone since it was listed: last

    stamps = {below: stamp(below) for below in paths}
    return sorted(paths, key=lambda below: -stamps[below])  # a stable sort keeps path order


class GrepTool(SearchTool, Tool[GrepParams]):
    """Searches file contents with a regular expression."""

    name = "grep"
    Params = GrepParams

    def __init__(self, searcher: Searcher, *, head_limit: int = 200) -> None:
        super().__init__(searcher)
        self.head_limit = head_limit
        self.description = texts.grep_description(head_limit)

    async def run(self, params: GrepParams, call: ToolCallContext) -> ToolResult:
        mode: OutputMode = params.output_mode
        query = GrepQuery(
            pattern=params.pattern,
            glob=params.glob,
            type=params.type,
            ignore_case=params.ignore_case,
            context=params.context,
            mode=mode,
            hidden=hidden_named(params.glob),
        )

        async def work(root: Root) -> ToolResult:
            out = Collected(params.head_limit or self.head_limit, texts.GREP_LINE_CHARS)
            await self.searcher.grep(root, query, out, call=call)
            if not out.lines:
                return ToolResult.text(texts.no_matches(params.pattern, root.shown))
            lines = out.lines if not out.omitted else [*out.lines, texts.lines_left_out(out.omitted)]
            return ToolResult.text("\n".join(lines))

        return await self._from_root(call, params.path, work)

    def present(self, params: GrepParams) -> ToolPresentation:
        where = f" in {params.path}" if params.path else ""
        only = f" ({params.glob or params.type})" if params.glob or params.type else ""
        return ToolPresentation(title=f"Search {params.pattern}{where}{only}", kind="search")

    def render_result(self, result: ToolResult) -> list[str]:
        return [code_block(result.plain_text())]


def pick_searcher(engine: Engine, timeout_seconds: float) -> Searcher:
    """ripgrep when asked for or (`auto`) installed, else the pure-Python engine."""
    binary = ripgrep_binary() if engine == "auto" else None
    if binary is None:
        return PythonSearcher(timeout_seconds)
    return RipgrepSearcher(binary, timeout_seconds)


# The plugin: module attributes, as the loader expects.
name = "search"
inject = ("tools",)


class Config(PluginConfig):
    """Configuration of the `search` plugin row."""

    engine: Engine = "auto"
    """`auto`: ripgrep when its wheel is installed, else Python; `python`: always the fallback."""
    max_results: int = Field(default=1000, gt=0)
    """The most files one glob call lists."""
    head_limit: int = Field(default=200, gt=0)
    """grep's default output lines."""
    timeout_seconds: float = Field(default=60, gt=0)
    """A search running longer is stopped."""


def apply(ctx: Context, config: Config) -> Disposer:
    """Register glob and grep for every agent."""
    searcher = pick_searcher(config.engine, config.timeout_seconds)
    tools = (GlobTool(searcher, max_results=config.max_results), GrepTool(searcher, head_limit=config.head_limit))
    return combine(*(ctx.get(TOOLS).register(tool) for tool in tools))
