"""Files inside the session's cwd, reached only from a directory descriptor of the cwd.

`resolve_in` checks where a path leads: it walks the path component by component from a
descriptor of the cwd, following symbolic links itself (each link's target is walked the same way)
and refusing any step out of the cwd. The result, a `Target`, names the file by components that
were real directories and a last name when they were checked.

The disk operations (`open_read`, `replace`, `make_parents`, `kind`) walk a `Target`'s components
again from a fresh descriptor of the cwd with `O_NOFOLLOW` at every step and follow no link at all:
a symbolic link swapped into the path after the check makes the operation fail, it never redirects
it. `replace` writes a new file beside the old one and renames it over it (a new inode), so a hard
link to the old file, wherever its other name is, keeps the old content.

These functions block: the workspace runs them in a worker thread.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from acp_agent.tools.errors import NotOwned, OutsideWorkspace

MAX_LINKS = 40
"""Symbolic links followed while resolving one path (the kernel's own limit)."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Target(NamedTuple):
    """A file path checked to lie inside the session's cwd."""

    cwd: Path
    """The cwd as the editor gave it (absolute)."""
    parts: tuple[str, ...]
    """The components below the cwd, symbolic links and `..` resolved; empty: the cwd itself."""
    other_root: bool = False
    """`cwd` is another writable root than the session's cwd (`resolve_among`)."""

    @property
    def path(self) -> Path:
        """Absolute, in the cwd's terms: the cwd as the editor gave it, joined with the resolved rest."""
        return self.cwd.joinpath(*self.parts)

    @property
    def shown(self) -> str:
        """How results name the file to the model: relative to the session's cwd, or absolute in
        another root."""
        if self.other_root:
            return str(self.path)
        return "/".join(self.parts) or "."


def resolve_in(cwd: Path, path: str) -> Target:
    """Where `path` (relative to `cwd`, or absolute) leads, with `..` and symbolic links resolved;
    OutsideWorkspace when that is not inside `cwd`. Components that do not exist (yet) are taken
    as written."""
    base = Path(os.path.abspath(cwd))
    real = Path(os.path.realpath(base))
    rest = _below(PurePosixPath(path), base, real)
    if rest is None:
        raise OutsideWorkspace(path, [base])
    resolved: list[str] = []
    fds: list[int] = [os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    pending = list(reversed(rest))  # a stack: the next component last
    links = 0
    missing = False  # a component did not exist: the rest is taken as written
    try:
        while pending:
            name = pending.pop()  # never "" or ".": PurePosixPath drops them
            if name == "..":
                if not resolved:
                    raise OutsideWorkspace(path, [base], through_link=links > 0)
                resolved.pop()
                if len(fds) > len(resolved) + 1:
                    os.close(fds.pop())
                continue
            if missing:
                resolved.append(name)
                continue
            try:
                info = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
            except FileNotFoundError:
                missing = True
                resolved.append(name)
                continue
            if stat.S_ISLNK(info.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
                link = PurePosixPath(os.readlink(name, dir_fd=fds[-1]))
                if link.is_absolute():
                    inside = _below(link, base, real)
                    if inside is None:
                        raise OutsideWorkspace(path, [base], through_link=True)
                    while len(fds) > 1:
                        os.close(fds.pop())
                    resolved.clear()
                    pending.extend(reversed(inside))
                else:
                    pending.extend(reversed(link.parts))
                continue
            resolved.append(name)
            if stat.S_ISDIR(info.st_mode):
                fds.append(os.open(name, _DIR_FLAGS, dir_fd=fds[-1]))
            else:
                missing = True  # below a file nothing exists; an operation will say so
    finally:
        for fd in fds:
            os.close(fd)
    return Target(base, tuple(resolved))


def resolve_among(roots: Sequence[Path], path: str) -> Target:
    """`resolve_in` the first of `roots` (the session's cwd, then other roots it may write in)
    that holds `path`: a relative path is taken from the cwd, an absolute one outside it may lie
    in another root. OutsideWorkspace when none holds it: the root's whose symbolic link leads the
    path out of it, else the cwd's."""
    cwd, *others = roots
    try:
        return resolve_in(cwd, path)
    except OutsideWorkspace:
        if not os.path.isabs(path):
            raise
        for root in others:
            try:
                return resolve_in(root, path)._replace(other_root=True)
            except OutsideWorkspace as exc:
                if exc.through_link:  # the path is this root's: a link on the way leads out
                    raise exc from None
        raise


def _below(path: PurePosixPath, base: Path, real: Path) -> tuple[str, ...] | None:
    """The components of `path` below the cwd (relative: all of them; absolute: below the cwd
    as given or as resolved, `..` taken lexically first if need be); None if it is not below."""
    if not path.is_absolute():
        return path.parts
    for candidate in (path, PurePosixPath(os.path.normpath(path))):
        for root in (base, real):
            if candidate.is_relative_to(root):
                return candidate.relative_to(root).parts
    return None


# --- operations on a checked target ---------------------------------------------------------


def open_read(target: Target) -> int:
    """A descriptor of the regular file `target` names, open for reading (the caller closes it)."""
    with _parent(target, create=False) as (parent, name):
        fd = _open(target, name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, parent)
    try:
        _regular(target, os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_directory(target: Target) -> int:
    """A descriptor of the directory `target` names (the cwd itself when it has no parts), reached
    with `O_NOFOLLOW` at each step (the caller closes it): a search walks below it from there, so
    a symbolic link swapped into its path after the check cannot move the search elsewhere."""
    if not target.parts:
        return os.open(target.cwd, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    with _parent(target, create=False) as (parent, name):
        return _open(target, name, _DIR_FLAGS, parent)


def read_bytes(target: Target) -> bytes:
    """The whole content of the regular file `target` names."""
    return read_head(target, -1)[0]


def read_head(target: Target, limit: int) -> tuple[bytes, int]:
    """At most `limit` bytes (-1: all) of the regular file `target` names, from its start, and its
    size: a file the agent reads on its own (project instructions, command files) is never read
    whole, and a FIFO or a device there is refused, not waited on or read forever."""
    fd = open_read(target)
    with os.fdopen(fd, "rb") as file:
        return file.read(limit), os.fstat(fd).st_size


def project_file_head(project: Path, path: Path, limit: int) -> tuple[bytes, int]:
    """`read_head` of a file a project holds (`path` inside `project`): OutsideWorkspace when a
    symbolic link leads out of the project, so a repository cannot hand the model a file of the
    user's elsewhere (a credentials file, say) under the name of its instructions or commands."""
    return read_head(resolve_in(project, str(path)), limit)


def user_file_head(path: Path, limit: int) -> tuple[bytes, int]:
    """`read_head` of a file of the user's own configuration: its symbolic links are the user's and
    are followed (to a dotfiles repository, say); only the final open follows none."""
    try:
        real = path.resolve()
    except RuntimeError:  # Python before 3.13 reports a loop of links so, not as an OSError
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from None
    return read_head(Target(real.parent, (real.name,)), limit)


def replace(target: Target, data: bytes) -> None:
    """Create the file `target` names, or replace it by a new file with `data` (the old file's
    permission bits kept), creating missing parent directories. A file of another user is refused
    (`NotOwned`); a symbolic link swapped in at the last name is replaced, never followed."""
    with _parent(target, create=True) as (parent, name):
        try:
            old: os.stat_result | None = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None:
            if stat.S_ISLNK(old.st_mode):
                raise _link_error(target)
            _regular(target, old)
            if old.st_uid != os.geteuid():
                raise NotOwned(errno.EPERM, "the file belongs to another user", str(target.path))
        temp = f".{os.urandom(6).hex()}.acp-agent.tmp"  # secrets.token_hex, without importing secrets
        # A new file gets the mode any new file would (0o666 less the umask); a replaced one its own.
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600 if old else 0o666,
            dir_fd=parent,
        )
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                if old is not None:
                    os.fchmod(file.fileno(), stat.S_IMODE(old.st_mode))
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=parent)
            raise


def make_parents(target: Target) -> None:
    """Create the missing directories above `target`."""
    with _parent(target, create=True):
        pass


class Stamp(NamedTuple):
    """What tells a file's versions apart without reading it."""

    size: int
    mtime_ns: int


def stamp(target: Target) -> Stamp | None:
    """The regular file `target` names, as its size and modification time; None when no regular
    file is there."""
    try:
        with _parent(target, create=False) as (parent, name):
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    return Stamp(info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None


def kind(target: Target) -> str | None:
    """What `target` names now: "file", "directory", "other", or None when nothing is there."""
    try:
        with _parent(target, create=False) as (parent, name):
            mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "directory" if stat.S_ISDIR(mode) else "other"


@contextmanager
def _parent(target: Target, *, create: bool) -> Iterator[tuple[int, str]]:
    """A descriptor of the directory holding `target`, reached with `O_NOFOLLOW` at each step,
    and the last name; with `create`, missing directories on the way are made."""
    if not target.parts:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target.path))
    fd = os.open(target.cwd, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in target.parts[:-1]:
            try:
                step = _open(target, name, _DIR_FLAGS, fd)
            except FileNotFoundError:
                if not create:
                    raise
                with suppress(FileExistsError):  # made meanwhile: open what is there, still not following
                    os.mkdir(name, dir_fd=fd)
                step = _open(target, name, _DIR_FLAGS, fd)
            os.close(fd)
            fd = step
        yield fd, target.parts[-1]
    finally:
        os.close(fd)


def _open(target: Target, name: str, flags: int, parent: int) -> int:
    """`name` in `parent` opened with `flags` (which hold `O_NOFOLLOW`); a symbolic link found
    there (someone put it there after the check) fails with an error that says so."""
    try:
        return os.open(name, flags, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, parent):
            raise _link_error(target) from None
        raise


def _is_link(name: str, parent: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _link_error(target: Target) -> OSError:
    return OSError(errno.ELOOP, "a symbolic link appeared in its path after it was checked", str(target.path))


def _regular(target: Target, info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target.path))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(target.path))
