"""How `glob` and `grep` search: ripgrep when its binary is installed (the `ripgrep` wheel), else
the pure-Python `PythonSearcher` (`pysearch.py`), with the same output format and limits.

A search starts from a descriptor of its root (`confined.open_directory` or `open_read`: reached
without following a symbolic link), never from a path looked up again, and neither engine follows a
symbolic link below it: what it reads stays inside the root. Paths in the output are relative to
the session's cwd (`Root.shown` joined with the path below the root).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal, NamedTuple

import anyio
from anyio.abc import ByteReceiveStream

from acp_agent.processes.registry import PROCESSES
from acp_agent.processes.spawn import open_leader
from acp_agent.tools import texts
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.bash import reap
from acp_agent.tools.confined import Target

OutputMode = Literal["content", "files", "count"]
Engine = Literal["auto", "python"]

_FD_DIR: Final = Path("/dev/fd")
"""Each open descriptor of the reading process as a path (Linux, macOS): how rg is handed its root."""


class Root(NamedTuple):
    """Where a search starts: an open descriptor of a directory or of one file."""

    fd: int
    is_dir: bool
    target: Target
    """What the descriptor was opened from (its `shown`, relative to the cwd, names the results)."""
    absolute: bool = False
    """Results name it by its absolute path (a file of the session's scratch directory)."""

    @property
    def shown(self) -> str:
        return str(self.target.path) if self.absolute else self.target.shown

    def name(self, below: str) -> str:
        """How results name `below` (a path under a directory root; ignored for a file root)."""
        if not self.is_dir:
            return self.shown
        return below if self.shown == "." else f"{self.shown}/{below}"


class GrepQuery(NamedTuple):
    pattern: str
    glob: str | None
    type: str | None
    ignore_case: bool
    context: int
    mode: OutputMode
    hidden: bool
    """Search hidden files and directories (a `glob` that names one)."""


class SearchFailed(Exception):
    """The search could not run as asked (an invalid pattern, an unknown type); the message is
    what the model reads."""


class Collected:
    """The first `limit` output lines of a search, and how many more there were."""

    def __init__(self, limit: int, max_line_chars: int) -> None:
        self.limit = limit
        self.max_line_chars = max_line_chars
        self.lines: list[str] = []
        self.omitted = 0

    def add(self, line: str) -> None:
        if len(self.lines) >= self.limit:
            self.omitted += 1
            return
        if len(line) > self.max_line_chars:
            line = line[: self.max_line_chars] + texts.LINE_CUT
        self.lines.append(line)


class Searcher(ABC):
    """A search engine: lists the files under a root, or searches their lines."""

    name: str

    @abstractmethod
    async def files(self, root: Root, *, hidden: bool, call: ToolCallContext) -> list[str]:
        """The files below the directory `root` that ignore files do not exclude (`.ignore`;
        `.gitignore` in a git repository), hidden ones only with `hidden`, as paths relative to
        the root, in path order."""

    @abstractmethod
    async def grep(self, root: Root, query: GrepQuery, out: Collected, *, call: ToolCallContext) -> None:
        """Search `root` (a directory: those of the files `files` lists that the query's `glob`
        and `type` select; a file: that file), binary files skipped, and add the output lines to
        `out` in path order."""


def hidden_named(pattern: str | None) -> bool:
    """Whether a glob names a hidden file or directory (a component starting with a dot)."""
    return pattern is not None and any(part.startswith(".") and part not in (".", "..") for part in pattern.split("/"))


@functools.cache
def ripgrep_binary() -> Path | None:
    """The `rg` the `ripgrep` distribution installed (found through its own file list, not
    `PATH`), or None when it is not installed or its binary is not there."""
    try:
        dist = importlib.metadata.distribution("ripgrep")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name in ("rg", "rg.exe"):
            path = Path(str(dist.locate_file(file))).resolve()
            if os.access(path, os.X_OK):
                return path
    return None  # pragma: no cover - a ripgrep distribution without its binary


class RipgrepSearcher(Searcher):
    """`rg` in a process group of its own (registered like a command's, so the server ends it with
    the session), in the root's directory reached through its descriptor."""

    name = "ripgrep"

    def __init__(self, binary: Path, timeout_seconds: float) -> None:
        self.binary = binary
        self.timeout_seconds = timeout_seconds

    async def files(self, root: Root, *, hidden: bool, call: ToolCallContext) -> list[str]:
        found: list[str] = []
        await self._run(root, ["--files", "--null", *_hidden_args(hidden)], b"\0", found.append, call)
        return [_below(path) for path in found]

    async def grep(self, root: Root, query: GrepQuery, out: Collected, *, call: ToolCallContext) -> None:
        args = ["--null", "--no-heading", "--with-filename", *_hidden_args(query.hidden)]
        if query.ignore_case:
            args.append("--ignore-case")
        allowed: set[str] | None = None
        if root.is_dir and (query.glob is not None or query.type is not None):
            # rg's --glob and --type select files past its ignore files and hidden rule; here they
            # only narrow what those let through: the output keeps the files a listing keeps.
            allowed = {f"./{below}" for below in await self.files(root, hidden=query.hidden, call=call)}
            if query.glob is not None:
                args += ["--glob", query.glob]
            if query.type is not None:
                args += ["--type", query.type]
        if query.mode == "files":
            args.append("--files-with-matches")

            def path(text: str) -> None:
                if allowed is None or text in allowed:
                    out.add(root.name(_below(text)))

            await self._run(root, args, b"\0", path, call, query.pattern)
            return
        if query.mode == "count":
            args.append("--count")
        else:
            args += ["--line-number", f"--context={query.context}"]

        def line(text: str) -> None:
            path, nul, rest = text.partition("\0")
            if not nul:
                if text == "--" and out.lines:  # between groups of context
                    out.add(text)
                return  # "binary file matches" of a file root: binary files are skipped
            if allowed is not None and path not in allowed:
                return
            name = root.name(_below(path))
            if query.mode == "count":
                out.add(f"{name}:{rest}")
            else:  # "12:text" for a match, "12-text" for context: rg's own separators
                digits = len(rest) - len(rest.lstrip("0123456789"))
                out.add(f"{name}{rest[digits : digits + 1]}{rest}")

        await self._run(root, args, b"\n", line, call, query.pattern)

    async def _run(
        self,
        root: Root,
        args: list[str],
        separator: bytes,
        emit: Callable[[str], None],
        call: ToolCallContext,
        pattern: str | None = None,
    ) -> None:
        target, cwd = _where(root)
        argv = [str(self.binary), "--no-config", "--color=never", "--sort=path", *args]
        if pattern is not None:
            argv += ["--regexp", pattern]
        argv += ["--", target]
        group = call.ctx.get(PROCESSES).group(call.scope) if call.ctx.has(PROCESSES) else None
        env = {"PATH": os.environ.get("PATH", "")}
        process = await open_leader(
            argv,
            cwd=cwd,
            env=env,
            group=group,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(root.fd,),
        )
        errors = bytearray()
        finished = False
        try:
            with anyio.move_on_after(self.timeout_seconds) as timer:
                async with anyio.create_task_group() as tg:
                    assert process.stdout is not None and process.stderr is not None  # both piped
                    tg.start_soon(_drain, process.stderr, errors)
                    rest = b""
                    async for chunk in process.stdout:
                        *items, rest = (rest + chunk).split(separator)
                        for item in items:
                            emit(item.decode("utf-8", "replace"))
                    if rest:
                        emit(rest.decode("utf-8", "replace"))
                    await process.wait()
                finished = True
        finally:
            await reap(process, kill=not finished)
            if group is not None:
                group.exited()
        if timer.cancelled_caught:
            raise SearchFailed(texts.search_timed_out(self.timeout_seconds))
        if process.returncode == 2 and errors:
            message = errors.decode("utf-8", "replace").strip()
            # A file it could not read is a warning among results; a bad pattern or type is not.
            if "regex parse error" in message or "unrecognized file type" in message or "error parsing glob" in message:
                raise SearchFailed(texts.search_refused(message.removeprefix("rg: ")))


async def _drain(stream: ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        if len(into) < 64 * 1024:  # what rg says is kept short: its first errors are the telling ones
            into += chunk


def _hidden_args(hidden: bool) -> list[str]:
    # A repository's own database is never what the model searches for, hidden files or not.
    return ["--hidden", "--glob", "!.git/"] if hidden else []


def _where(root: Root) -> tuple[str, str | None]:
    """The path argument and the working directory that make rg read the root through its
    descriptor (passed to it): a directory is rg's working directory, searched as `./`."""
    fd_path = _FD_DIR / str(root.fd)
    if root.is_dir:
        return "./", str(fd_path)
    return str(fd_path), None


def _below(path: str) -> str:
    return path.removeprefix("./")
