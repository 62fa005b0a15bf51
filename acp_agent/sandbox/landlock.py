"""Landlock (Linux >= 5.13) through `_ctypes` (ctypes' C module): which ABI the kernel offers, and confining the calling
process (and everything it will start): what it may write, what it may not read, the network.

Landlock grants access per file hierarchy: a rule on a directory holds for everything below it,
and nothing can be taken away below a granted directory. "Read everywhere except the hidden
directories" is therefore built by walking from `/` down to each hidden directory: the entries
beside the path are granted in full, the directories on the path only their listing (so `ls ~`
still works; the hidden directory's names can be listed, its files cannot be read), the hidden
directory nothing.
"""

from __future__ import annotations

import _ctypes
import os
import stat
import sys

from acp_agent.sandbox.paths import within

TYPE_CHECKING = False  # typing's own import costs the launcher's start-up a few ms
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    _Simple = _ctypes._SimpleCData[int]
else:
    _Simple = _ctypes._SimpleCData  # not subscriptable at run time

# <linux/landlock.h>; the system call numbers are the same on every architecture.
_CREATE_RULESET = 444
_ADD_RULE = 445
_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2: link or rename across directories
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_SIGNAL = 1 << 1  # ABI 6: no signal to a process outside the sandbox

_ABI1_FS = (1 << 13) - 1
READ = EXECUTE | READ_FILE | READ_DIR | IOCTL_DEV
"""What every readable hierarchy grants (a device's ioctl reads or sets its state, not files)."""


# The C types and functions are built on `_ctypes`, the C module under `ctypes`: importing
# `ctypes` itself (its many types and helpers) costs the launcher several ms per command
# (bench/sandbox.py); these few are all Landlock needs.
class _U64(_Simple):
    _type_ = "Q"


class _I32(_Simple):
    _type_ = "i"


class _U32(_Simple):
    _type_ = "I"


class _SizeT(_Simple):
    _type_ = "L"  # size_t is unsigned long on Linux


class _Function(_ctypes.CFuncPtr):
    """A libc function returning a C int, which sets `errno` (read with `_ctypes.get_errno`)."""

    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO


class _RulesetAttr(_ctypes.Structure):
    _fields_ = [("handled_access_fs", _U64), ("handled_access_net", _U64), ("scoped", _U64)]


class _PathBeneathAttr(_ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", _U64), ("parent_fd", _I32)]


class LandlockError(OSError):
    """The kernel refused to set up the confinement (the launcher then runs nothing)."""


class _Libc:
    """The two libc functions Landlock is set up with."""

    def __init__(self) -> None:
        # None: the running program's own symbols, libc's among them (as ctypes' `CDLL(None)`).
        handle = _ctypes.dlopen(None, _ctypes.RTLD_LOCAL)  # type: ignore[arg-type]  # the stub wants a path; None is valid
        self.syscall = _Function(_ctypes.dlsym(handle, "syscall"))
        self.prctl = _Function(_ctypes.dlsym(handle, "prctl"))


def _libc() -> _Libc:
    return _Libc()


def abi() -> int:
    """The highest Landlock ABI the kernel offers; 0 when it offers none (another OS, an older
    kernel, or Landlock not enabled at boot)."""
    if sys.platform != "linux":
        return 0  # pragma: no cover - the suite runs on Linux
    version = _libc().syscall(_CREATE_RULESET, None, _SizeT(0), _U32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def handled(version: int) -> tuple[int, int, int]:
    """The (file, network, scope) rights a ruleset handles at ABI `version`."""
    fs = (
        _ABI1_FS
        | (REFER if version >= 2 else 0)
        | (TRUNCATE if version >= 3 else 0)
        | (IOCTL_DEV if version >= 5 else 0)
    )
    return fs, NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0, SCOPE_SIGNAL if version >= 6 else 0


def partial(version: int) -> list[str]:
    """What a policy cannot enforce at ABI `version` (empty: everything)."""
    missing = []
    if version < 2:
        missing.append("no linking or renaming across directories, even inside a writable root")
    if version < 3:
        missing.append("truncating a file is not confined")
    if version < 4:
        missing.append("network: deny cannot be enforced")
    return missing


def rules(writable: Sequence[str], hidden: Sequence[str], fs: int) -> Iterator[tuple[str, int]]:
    """(path, rights) rules: read everywhere but `hidden`, change `writable` (but what of `hidden`
    lies inside), with the handled file rights `fs`."""
    yield from _except("/", READ & fs, tuple(hidden))
    for root in writable:
        yield from _except(root, fs, tuple(hidden))
    yield "/dev/null", (READ_FILE | WRITE_FILE | TRUNCATE) & fs


def _except(path: str, rights: int, hidden: tuple[str, ...]) -> Iterator[tuple[str, int]]:
    """Rules granting `rights` on `path`'s hierarchy, less the `hidden` directories inside it."""
    inside = [h for h in hidden if within(h, path)]
    if not inside:
        yield path, rights
        return
    if path in inside:
        return  # a hidden directory: nothing
    yield path, rights & READ_DIR  # on the way to a hidden directory: its listing only
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        yield from _except(os.path.join(path, name), rights, tuple(inside))


def restrict(writable: Sequence[str], hidden: Sequence[str], *, deny_network: bool) -> int:
    """Confine this process and its future children: read everywhere but `hidden`, write only in
    `writable` and /dev/null, no TCP when `deny_network` (ABI >= 4); returns the ABI used. Raises
    `LandlockError` when the kernel offers no Landlock or refuses a step: nothing is then
    confined, and the caller must not run the command."""
    version = abi()
    if version < 1:
        raise LandlockError(0, "the kernel offers no Landlock")
    fs, net, scoped = handled(version)
    libc = _libc()
    attr = _RulesetAttr(fs, net if deny_network else 0, scoped)
    ruleset = libc.syscall(_CREATE_RULESET, _ctypes.byref(attr), _SizeT(_ctypes.sizeof(attr)), _U32(0))
    if ruleset < 0:
        _fail("landlock_create_ruleset")
    try:
        for path, allowed in rules(writable, hidden, fs):
            _add(libc, ruleset, path, allowed)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ruleset, _U32(0)) != 0:
            _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return version


def _add(libc: _Libc, ruleset: int, path: str, allowed: int) -> None:
    # O_NOFOLLOW: a symbolic link beside the path to a hidden directory must not grant its target.
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return  # gone meanwhile, or not ours to open: nothing to grant
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISLNK(mode):
            return  # a link's own inode carries no rights; its target has its own rules
        if not stat.S_ISDIR(mode):
            allowed &= _FILE_RIGHTS  # a rule on a file may hold only rights that apply to files
        beneath = _PathBeneathAttr(allowed, fd)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, _ctypes.byref(beneath), _U32(0)) != 0:
            _fail(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV


def _fail(step: str) -> None:
    errno = _ctypes.get_errno()
    raise LandlockError(errno, f"{step} failed: {os.strerror(errno)}")
