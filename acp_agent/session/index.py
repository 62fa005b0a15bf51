"""The index of stored sessions: what `session/list` shows of each and who started whom, kept in
`<root>/index.json` so that neither reads every log.

It is a cache; the logs stay the only source. An entry holds a session's summary and the size
and modification time its log had when the summary was taken. The store updates it when a
session is created and at each `turn/end` (not per event), writing the whole file aside and
renaming it over the old one, so a reader sees one or the other. Another process may write it
meanwhile (its own sessions): the file is read again whenever it changed, and what a lost update
would hide is found by two staleness checks against the directory: a session directory that is
new or gone (the root's modification time and link count tell that one is; its listing tells
which) is summarized from its log or dropped; an entry about to be listed whose log no longer has
the recorded size and time is summarized again. A missing or unreadable index is rebuilt from the
logs.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from acp_agent.session.errors import SessionLogDamaged, UnsupportedVersion
from acp_agent.session.events import USER_SOURCES, SessionHeader, UserMessageData
from acp_agent.session.files import FILE_MODE, append_line
from acp_agent.session.titles import session_title

log = logging.getLogger(__name__)

INDEX_FILE = "index.json"
SESSION_FILE = "session.jsonl"
CHILDREN_FILE = "children"
"""In a session's directory: the ids of the children it started, one a line, appended by the
process that holds the session (so never by two at once); every new session gets one."""
_VERSION = 1
Stamp = tuple[int, int]
"""A log's (size, modification time in ns): a summary taken at that stamp is still true."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What a listing shows of a stored session, and who started it."""

    id: str
    cwd: str | None
    parent_session: str | None
    created_at: int
    updated_at: int
    """The `time` of the last event that reads back (the header's `createdAt` when there is none)."""
    title: str | None
    """From the first `user/message` of a `USER_SOURCES` source (`session_title`)."""
    prompted: bool
    """Whether the session has such a message (a listing shows only sessions someone prompted)."""


@dataclass(slots=True)
class _Entry:
    summary: SessionSummary
    stamp: Stamp


class SessionIndex:
    """The index of the sessions under `root`, held in memory and in `root/index.json`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._path = root / INDEX_FILE
        self._entries: dict[str, _Entry] = {}
        self._children: dict[str, set[str]] = {}
        self._file_stamp: Stamp | None = None
        """The index file's stamp when it was read or written here (None: never)."""
        self._root_stamp: Stamp | None = None
        """The root's (link count, modification time) when its listing was last compared."""

    def summaries(self, cwd: str | None = None) -> list[SessionSummary]:
        """The top-level sessions (of `cwd`, normalized, when given), each checked against its log."""
        self._sync()
        root = os.fspath(self.root)
        listed = []
        for session_id, entry in list(self._entries.items()):
            summary = entry.summary
            if summary.parent_session is not None or (cwd is not None and (summary.cwd is None or os.path.normpath(summary.cwd) != cwd)):
                continue
            stamp = _stamp(f"{root}/{session_id}/{SESSION_FILE}")  # a str: pathlib costs more than the stat
            if stamp != entry.stamp:
                fresh = self._summarize(session_id) if stamp is not None else None
                if fresh is None:
                    continue
                summary = fresh.summary
            listed.append(summary)
        self._save_if_changed()
        return listed

    def children_of(self, session_id: str) -> list[str]:
        """The ids of the stored sessions whose header names `session_id` as their parent: from
        the session's own `children` file (its children as they were created, those deleted by
        hand left out), or for a log from before such files, from the index."""
        try:
            listed = (self.root / session_id / CHILDREN_FILE).read_text(encoding="utf-8").split()
        except FileNotFoundError:
            self._sync()
            self._save_if_changed()
            return sorted(self._children.get(session_id, ()))
        return sorted(child for child in set(listed) if os.path.isdir(self.root / child))

    def add_child(self, parent: str, child: str) -> None:
        """Note a new child in its parent's `children` file, when the parent is stored here."""
        if (self.root / parent).is_dir():
            append_line(self.root / parent / CHILDREN_FILE, child)

    def record(self, summary: SessionSummary, stamp: Stamp) -> None:
        """Put a session's summary, taken when its log had `stamp`, in the index and write it."""
        self._sync()
        self._put(summary.id, _Entry(summary, stamp))
        self._changed = True
        self._save_if_changed()

    # -- keeping in step with the directory and other writers ---------------------------------

    _changed = False

    def _sync(self) -> None:
        file_stamp = _stamp(self._path)
        if file_stamp is None or file_stamp != self._file_stamp:
            self._read(file_stamp)
        root = _root_stamp(self.root)
        if root is None or root == self._root_stamp:
            return
        names = {entry.name for entry in os.scandir(self.root) if entry.is_dir()}
        for gone in [session_id for session_id in self._entries if session_id not in names]:
            self._drop(gone)  # its directory was deleted by hand
        for name in names.difference(self._entries):
            self._summarize(name)
        self._root_stamp = root

    def _read(self, file_stamp: Stamp | None) -> None:
        """The index file's entries, or none (all are summarized again) when it is missing or unreadable."""
        self._entries, self._children, self._root_stamp = {}, {}, None
        self._file_stamp = file_stamp
        if file_stamp is None:
            self._changed = True  # rebuilt: written once the directory is compared
            return
        try:
            with self._path.open("rb") as file:
                sessions = _sessions(json.load(file))
        except (OSError, ValueError) as exc:
            log.warning("rebuilding the session index %s: %s", self._path, exc)
            self._changed = True
            return
        for session_id, entry in sessions:
            self._put(session_id, entry)

    def _summarize(self, session_id: str) -> _Entry | None:
        """A session's entry made from its log (None for a log that is gone or whose header does
        not read back: loading it names the damage)."""
        path = self.root / session_id / SESSION_FILE
        stamp = _stamp(path)  # before the read: a log that grows meanwhile is read again next time
        if stamp is None:
            self._drop(session_id)
            return None
        try:
            summary = summarize(path)
        except (OSError, SessionLogDamaged, UnsupportedVersion) as exc:
            log.warning("not listing %s: %s", path, exc)
            self._drop(session_id)
            return None
        entry = _Entry(summary, stamp)
        self._put(session_id, entry)
        self._changed = True
        return entry

    def _put(self, session_id: str, entry: _Entry) -> None:
        self._drop(session_id)
        self._entries[session_id] = entry
        parent = entry.summary.parent_session
        if parent is not None:
            self._children.setdefault(parent, set()).add(session_id)

    def _drop(self, session_id: str) -> None:
        entry = self._entries.pop(session_id, None)
        if entry is None:
            return
        self._changed = True
        parent = entry.summary.parent_session
        if parent is not None:
            self._children.get(parent, set()).discard(session_id)

    def _save_if_changed(self) -> None:
        """Write the index aside and rename it over the old one; a failure only costs a rebuild."""
        if not self._changed or not self.root.is_dir():
            return
        self._changed = False
        data = json.dumps(
            {"version": _VERSION, "sessions": {session_id: _dump(entry) for session_id, entry in self._entries.items()}},
            separators=(",", ":"),
        ).encode()
        try:
            fd, staging = tempfile.mkstemp(dir=self.root, prefix=f".{INDEX_FILE}.", suffix=".tmp")
            try:
                os.fchmod(fd, FILE_MODE)
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
                os.replace(staging, self._path)
            except BaseException:
                os.unlink(staging)
                raise
        except OSError as exc:
            log.warning("cannot write the session index %s: %s", self._path, exc)
            return
        self._file_stamp = _stamp(self._path)
        if self._root_stamp is not None:
            self._root_stamp = _root_stamp(self.root)  # the rename touched the root, not its sessions


def _stamp(path: str | Path) -> Stamp | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _root_stamp(root: Path) -> Stamp | None:
    try:
        stat = os.stat(root)
    except FileNotFoundError:
        return None
    return stat.st_nlink, stat.st_mtime_ns


def _dump(entry: _Entry) -> list[Any]:
    summary = entry.summary
    return [
        summary.cwd,
        summary.parent_session,
        summary.created_at,
        summary.updated_at,
        summary.title,
        summary.prompted,
        entry.stamp[0],
        entry.stamp[1],
    ]


def _sessions(data: Any) -> Iterable[tuple[str, _Entry]]:
    """The entries of an index file's JSON; ValueError for anything this version did not write."""
    if not isinstance(data, dict) or data.get("version") != _VERSION or not isinstance(data.get("sessions"), dict):
        raise ValueError("not an index this version wrote")
    entries = []
    for session_id, item in data["sessions"].items():
        if type(item) is not list or len(item) != 8:
            raise ValueError(f"entry {session_id!r} is not one this version wrote")
        cwd, parent, created_at, updated_at, title, prompted, size, mtime_ns = item
        if not (
            (cwd is None or type(cwd) is str)
            and (parent is None or type(parent) is str)
            and (title is None or type(title) is str)
            and type(created_at) is type(updated_at) is type(size) is type(mtime_ns) is int
            and type(prompted) is bool
        ):
            raise ValueError(f"entry {session_id!r} is not one this version wrote")
        summary = SessionSummary(session_id, cwd, parent, created_at, updated_at, title, prompted)
        entries.append((session_id, _Entry(summary, (size, mtime_ns))))
    return entries


# -- a summary from the log itself ------------------------------------------------------------


def summarize(path: Path) -> SessionSummary:
    """The header, the first user message (lines are read up to it) and the last event's time
    (the file is read backwards from its end until a line parses)."""
    with path.open("rb") as file:
        header = read_header(path, file.readline())
        first_message = None
        for line in file:
            try:
                obj = json_object(line)
                if obj.get("type") == "user/message":
                    message = UserMessageData.model_validate(obj.get("data"))
                    if message.source.kind in USER_SOURCES:
                        first_message = message.content
                        break
            except ValueError:  # damage is for `load` to report; a listing skips the line
                continue
        updated_at = _last_time(file)
    return SessionSummary(
        id=header.id,
        cwd=header.cwd,
        parent_session=header.parent_session,
        created_at=header.created_at,
        updated_at=header.created_at if updated_at is None else updated_at,
        title=None if first_message is None else session_title(first_message),
        prompted=first_message is not None,
    )


def _last_time(file: BinaryIO) -> int | None:
    """The `time` of the last line that parses as an event, reading ever larger tails."""
    size = file.seek(0, os.SEEK_END)
    window = 1 << 14
    while True:
        start = max(0, size - window)
        file.seek(start)
        lines = file.read(size - start).split(b"\n")
        for line in reversed(lines[1:] if start else lines):  # a cut first line is read next time
            try:
                obj = json_object(line)
            except ValueError:
                continue
            if obj.get("type") != "session" and type(obj.get("time")) is int:
                return int(obj["time"])
        if start == 0:
            return None
        window *= 4


def json_object(line: bytes) -> dict[str, Any]:
    obj = json.loads(line)
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def read_header(path: Path, line: bytes) -> SessionHeader:
    try:
        return SessionHeader.model_validate(json_object(line))
    except ValueError as exc:
        raise SessionLogDamaged(path, 1, f"{type(exc).__name__}: {exc}") from exc
