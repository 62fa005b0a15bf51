"""The bytes of session logs on disk: the one write path, the per-session lock, private modes.

Every log line goes through `LogFile.append`, which returns once `write(2)` has taken all of it:
the bytes then belong to the operating system and survive the process (kill -9, a signal, a
crash), not the machine (no fsync). The one exception is the streamed chunk, the line a long
answer writes by the thousand: `hold` keeps it for the next `append` or `flush`, one `write(2)`
for many. The store flushes before each write to stdout (the server's writer asks it), so a
chunk's line is still the operating system's before its frame is on the wire; see the package
README.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from stat import S_ISDIR

from acp_agent.session.errors import ForeignSessionsDirectory, UnusableSessionsDirectory

FILE_MODE = 0o600
DIR_MODE = 0o700
LOCK_FILE = "lock"
_WRITE_SIZE = 1 << 20


class LogFile:
    """An open session log, appended to one whole line at a time. A write that fails (a full
    disk, a read-only or failing file system, a file deleted under it) raises its `OSError` and
    leaves the file as it was before that write: the part it did write is cut off again, so the
    file only ever holds whole lines, and what was held stays held for the next write."""

    def __init__(self, fd: int, size: int = 0) -> None:
        self._fd = fd
        self._held = bytearray()
        self._size = size
        """The bytes of the file that hold whole lines: where a failed write is cut back to."""
        self._cut = False
        """A failed write's part is still in the file (cutting it failed too): cut before the next."""
        self.failure: OSError | None = None
        """The last write's error, None once a write succeeds."""

    @classmethod
    def create(cls, path: Path, lines: Iterable[bytes]) -> LogFile:
        """A log written whole: into a staging file of its own (two writers never share one),
        renamed over `path` once complete, so a reader sees the old file or the new one."""
        fd, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.fchmod(fd, FILE_MODE)
            log = cls(fd)
            pending = bytearray()  # written a megabyte at a time: a long log is never whole in memory
            for line in lines:
                pending += line
                if len(pending) >= _WRITE_SIZE:
                    log.append(pending)
                    pending.clear()
            log.append(pending)
            os.replace(staging, path)
        except BaseException:
            os.close(fd)
            os.unlink(staging)
            raise
        return log

    @classmethod
    def reopen(cls, path: Path, end: int) -> LogFile:
        """An existing log continued after its first `end` bytes (what follows is a torn tail,
        dropped). `end` ends a line without its newline, which is written again here. A log
        that is that line's newline longer has no tail and is left as it is: a load that repairs
        nothing writes nothing (the log keeps its time, and the session index its summary)."""
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        try:
            os.fchmod(fd, FILE_MODE)
            log = cls(fd, end + 1)
            if os.fstat(fd).st_size != end + 1:
                os.ftruncate(fd, end)
                log._size = end
                log.append(b"\n")
        except BaseException:
            os.close(fd)
            raise
        return log

    def append(self, data: bytes | bytearray) -> None:
        """Hand what `hold` kept, then `data`, to the operating system; returns when `write(2)`
        has taken all of it. If it fails, what was held stays held and `data` is not written."""
        if self._held:
            # A copy: a write that fails must leave the held lines as they were, and resizable
            # (a view of the buffer itself would still export it from the failure's traceback).
            self._write(bytes(self._held) + data)
            self._held.clear()
        else:
            self._write(data)

    def hold(self, data: bytes) -> bool:
        """Keep `data` for the next `append` or `flush` (a streamed chunk's line: see above);
        whether nothing was held before."""
        began = not self._held
        self._held += data
        return began

    def flush(self) -> None:
        """Hand what `hold` kept to the operating system."""
        if self._held:
            self._write(bytes(self._held))  # a copy, as in `append`
            self._held.clear()

    def stamp(self) -> tuple[int, int]:
        """The file's (size, modification time in ns), as `os.stat` gives them, all lines written."""
        self.flush()
        stat = os.fstat(self._fd)
        return stat.st_size, stat.st_mtime_ns

    def close(self) -> None:
        try:
            self.flush()
        finally:
            os.close(self._fd)

    def _write(self, data: bytes | bytearray) -> None:
        written = 0
        try:
            if self._cut:
                self._cut_to_size()
                self._cut = False
            if os.fstat(self._fd).st_nlink == 0:  # its directory removed by hand: lines written here are lost
                raise FileNotFoundError(errno.ENOENT, "the log file was deleted")
            with memoryview(data) as view:
                while written < len(view):
                    written += os.write(self._fd, view[written:])
        except OSError as exc:
            self.failure = exc
            if written:
                self._cut_back()
            raise
        self._size += written
        self.failure = None

    def _cut_back(self) -> None:
        """Cut off what a failed write did write (a full disk takes part of a line)."""
        try:
            self._cut_to_size()
        except OSError:
            self._cut = True

    def _cut_to_size(self) -> None:
        os.ftruncate(self._fd, self._size)
        # A created log's descriptor writes where it stands, not at the end (`mkstemp` opens
        # it without O_APPEND): it goes back too, or the next line would leave a hole of zeros.
        os.lseek(self._fd, self._size, os.SEEK_SET)


class SessionLock:
    """An exclusive `flock` on a session directory's lock file. The kernel drops it when the
    process dies, however it dies, so it never goes stale."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def try_acquire(cls, directory: Path) -> SessionLock | None:
        """The lock, or None while another holder (another process, or another open file of this
        one) has it."""
        path = directory / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return cls(fd, path)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor of the open file drops the flock
            self._fd = None


def append_line(path: Path, text: str) -> None:
    """Append `text` and a newline to a small private file (created 0600 when missing)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        os.write(fd, f"{text}\n".encode() if text else b"")
    finally:
        os.close(fd)


def private_dir(path: Path) -> None:
    """Make `path` and any missing parent a directory only the user can enter (0700, whatever
    the umask); directories that exist already keep their mode."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:  # made by someone else meanwhile: theirs to keep as it is
            continue
        os.chmod(directory, DIR_MODE)


def check_sessions_directory(directory: Path) -> None:
    """Make the sessions directory now (private, the user's) if it is missing, and refuse one that
    cannot hold logs, at start rather than at the first session: a file in its way, a path that
    cannot be made, one that is not writable, or one that is not the user's (logs hold the user's
    conversations and commands, so another account must not be able to read or plant them)."""
    try:
        private_dir(directory)
    except OSError as exc:
        raise UnusableSessionsDirectory(directory, f"it cannot be made ({exc.strerror or exc})") from None
    info = directory.stat()
    if not S_ISDIR(info.st_mode):
        raise UnusableSessionsDirectory(directory, "it is not a directory")
    if info.st_uid != os.getuid():
        raise ForeignSessionsDirectory(directory, info.st_uid)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UnusableSessionsDirectory(directory, "it is not writable")
