"""The pure-Python search engine, for a machine where the `ripgrep` wheel does not install.

It reads what ripgrep reads and prints what `searchers.RipgrepSearcher` prints: the walk goes from
directory descriptors (`os.scandir` of a descriptor, `openat` without following links), in path
order (names sorted at each level, as `rg --sort=path`), skipping symbolic links, hidden names
(unless asked) and what ignore files exclude: `.ignore` everywhere, `.gitignore` inside a git
repository (a `.git` in the root or above it), each applying below its own directory and in the
directories above the root, matched by `pathspec` with git's own rules. A file with a NUL byte in
its first 8 KiB is binary and skipped. Patterns are Python's `re` (README: its differences from
ripgrep's syntax). Runs in a worker thread.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Final, NamedTuple, TypeVar

import anyio.to_thread
import pathspec

from acp_agent.tools import confined, texts
from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.confined import Target
from acp_agent.tools.searchers import Collected, GrepQuery, Root, Searcher, SearchFailed

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_IGNORE_BYTES: Final = 1024 * 1024
"""An ignore file is read up to this much (a longer one is not an ignore file anyone wrote)."""

TYPES: Final[dict[str, tuple[str, ...]]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"),
    "css": ("*.css", "*.scss"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm"),
    "java": ("*.java",),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs"),
    "json": ("*.json",),
    "md": ("*.md", "*.markdown"),
    "py": ("*.py", "*.pyi"),
    "rust": ("*.rs",),
    "sh": ("*.sh", "*.bash"),
    "toml": ("*.toml",),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "yaml": ("*.yaml", "*.yml"),
}
"""The file types the fallback knows (ripgrep knows many more: `rg --type-list`)."""


R = TypeVar("R")


class _Level(NamedTuple):
    """The ignore rules of one directory: a path below the root is matched as `prepend` + the path
    with `strip` taken off its front (relative to the rules' directory)."""

    strip: str
    prepend: str
    specs: tuple[pathspec.GitIgnoreSpec, ...]

    def verdict(self, below: str, is_dir: bool) -> bool | None:
        path = self.prepend + below[len(self.strip) :] + ("/" if is_dir else "")
        found: bool | None = None
        for spec in self.specs:  # .gitignore, then .ignore: the later one wins
            result = spec.check_file(path).include
            if result is not None:
                found = result
        return found


class PythonSearcher(Searcher):
    """Searches in a worker thread, which looks at a stop flag between files: a cancellation or a
    timeout returns at once, and the thread ends at its next file."""

    name = "python"

    def __init__(self, timeout_seconds: float) -> None:
        self.timeout_seconds = timeout_seconds

    async def files(self, root: Root, *, hidden: bool, call: ToolCallContext) -> list[str]:
        def run(stop: threading.Event) -> list[str]:
            above, repo = _above(root)
            return [below for _, _, below in _walk(root.fd, above, repo, hidden, stop)]

        return await self._in_thread(run)

    async def grep(self, root: Root, query: GrepQuery, out: Collected, *, call: ToolCallContext) -> None:
        flags = re.IGNORECASE if query.ignore_case else 0
        try:
            regex = re.compile(query.pattern, flags)
        except re.error as exc:
            raise SearchFailed(texts.search_refused(f"regex parse error: {exc}")) from None
        wanted = _filter(query)
        await self._in_thread(lambda stop: _grep(root, query, regex, wanted, out, stop))

    async def _in_thread(self, work: Callable[[threading.Event], R]) -> R:
        stop = threading.Event()
        try:
            with anyio.fail_after(self.timeout_seconds):
                return await anyio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
        except TimeoutError:
            raise SearchFailed(texts.search_timed_out(self.timeout_seconds)) from None
        finally:
            stop.set()


def _filter(query: GrepQuery) -> pathspec.GitIgnoreSpec | None:
    globs: list[str] = []
    if query.type is not None:
        known = TYPES.get(query.type)
        if known is None:
            raise SearchFailed(texts.unknown_type(query.type, sorted(TYPES)))
        globs += known
    if query.glob is not None:
        globs.append(query.glob)
    return pathspec.GitIgnoreSpec.from_lines(globs) if globs else None


def _grep(
    root: Root,
    query: GrepQuery,
    regex: re.Pattern[str],
    wanted: pathspec.GitIgnoreSpec | None,
    out: Collected,
    stop: threading.Event,
) -> None:
    printed = [False]  # anything printed yet: context groups are separated by "--", across files too
    if not root.is_dir:
        _grep_file(os.dup(root.fd), root.shown, query, regex, out, printed)
        return
    above, repo = _above(root)
    for parent, name, below in _walk(root.fd, above, repo, query.hidden, stop):
        if wanted is not None and not wanted.match_file(below):
            continue
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
        except OSError:
            continue  # gone, or a link swapped in: ripgrep reports it on stderr and goes on
        _grep_file(fd, root.name(below), query, regex, out, printed)


def _grep_file(
    fd: int, name: str, query: GrepQuery, regex: re.Pattern[str], out: Collected, printed: list[bool]
) -> None:
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or b"\0" in file.peek(texts.BINARY_PROBE)[: texts.BINARY_PROBE]:
            return
        count = 0
        context = query.context if query.mode == "content" else 0
        before: deque[tuple[int, str]] = deque(maxlen=context or 1)
        last = 0  # the last line number printed
        after = 0  # context lines still to print after a match
        for number, raw in enumerate(file, 1):
            text = raw.decode("utf-8", "replace").removesuffix("\n")
            if regex.search(text) is None:
                if after:
                    out.add(f"{name}-{number}-{text}")
                    last, after = number, after - 1
                elif context:
                    before.append((number, text))
                continue
            count += 1
            if query.mode == "files":
                out.add(name)
                return
            if query.mode == "count":
                continue
            first = before[0][0] if context and before else number
            if context and printed[0] and first > last + 1:
                out.add("--")
            for line_number, line in before if context else ():
                out.add(f"{name}-{line_number}-{line}")
            before.clear()
            out.add(f"{name}:{number}:{text}")
            printed[0] = True
            last, after = number, context
        if query.mode == "count" and count:
            out.add(f"{name}:{count}")


def _above(root: Root) -> tuple[list[_Level], bool]:
    """The ignore rules of the directories above the directory `root` (up to the file system's
    root, as ripgrep reads them), and whether it is inside a git repository (a `.git` in it or
    above it)."""
    target = root.target
    chain: list[tuple[Target, str]] = []  # each directory above, nearest first, and the root below it
    for depth in reversed(range(len(target.parts))):
        chain.append((Target(target.cwd, target.parts[:depth]), "/".join(target.parts[depth:]) + "/"))
    below = "/".join(target.parts)
    here = target.cwd
    for parent in here.parents:
        below = f"{here.name}/{below}" if below else here.name
        chain.append((Target(parent, ()), below + "/"))
        here = parent
    fds: list[int] = []
    try:
        for directory, _ in chain:
            try:
                fds.append(confined.open_directory(directory))
            except OSError:
                fds.append(-1)  # not searchable: no rules from there
        repo = any(_exists(fd, ".git") for fd in (root.fd, *fds))
        levels = [_rules(fd, repo, prepend=prepend) for fd, (_, prepend) in zip(fds, chain, strict=True)]
    finally:
        for fd in fds:
            if fd >= 0:
                os.close(fd)
    return [level for level in reversed(levels) if level is not None], repo


def _exists(directory: int, name: str) -> bool:
    if directory < 0:
        return False
    try:
        os.stat(name, dir_fd=directory, follow_symlinks=False)
    except OSError:
        return False
    return True


def _rules(directory: int, repo: bool, *, prepend: str = "", strip: str = "") -> _Level | None:
    """The `.gitignore` (in a repository) and `.ignore` rules of `directory`, None without any."""
    specs: list[pathspec.GitIgnoreSpec] = []
    for name in (".gitignore", ".ignore") if repo else (".ignore",):
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=directory)
        except OSError:
            continue  # none (or a symbolic link: not followed)
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            data = file.read(_IGNORE_BYTES)
        specs.append(pathspec.GitIgnoreSpec.from_lines(data.decode("utf-8", "replace").splitlines()))
    return _Level(strip, prepend, tuple(specs)) if specs else None


def _walk(
    root_fd: int, above: list[_Level], repo: bool, hidden: bool, stop: threading.Event
) -> Iterator[tuple[int, str, str]]:
    """Each file below the directory `root_fd` as (its directory's descriptor, its name, its path
    below the root), in path order; the descriptor is open while the item is used."""
    yield from _walk_dir(os.dup(root_fd), "", above, repo, hidden, stop)


def _walk_dir(
    fd: int, prefix: str, levels: list[_Level], repo: bool, hidden: bool, stop: threading.Event
) -> Iterator[tuple[int, str, str]]:
    try:
        own = _rules(fd, repo, strip=prefix)
        if own is not None:
            levels = [*levels, own]
        with os.scandir(fd) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
        for entry in entries:
            if entry.name.startswith(".") and (not hidden or entry.name == ".git"):
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and not entry.is_file(follow_symlinks=False):
                continue  # symbolic links are not followed; FIFOs and devices are not files to read
            below = prefix + entry.name
            if stop.is_set():
                return
            if _ignored(levels, below, is_dir):
                continue
            if not is_dir:
                yield fd, entry.name, below
                continue
            try:
                child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue  # gone, unreadable, or swapped for a link since it was listed
            yield from _walk_dir(child, below + "/", levels, repo, hidden, stop)
    finally:
        os.close(fd)


def _ignored(levels: list[_Level], below: str, is_dir: bool) -> bool:
    verdict = False
    for level in levels:  # the deepest directory's rules win
        found = level.verdict(below, is_dir)
        if found is not None:
            verdict = found
    return verdict
