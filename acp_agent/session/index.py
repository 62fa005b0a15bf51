"""The index of stored sessions: what `session/list` shows of each and who started whom, kept in
`<root>/.index/` (`index.json` and its journal) so that neither reads every log.

It is a cache; the logs stay the only source. An entry holds a session's summary and the size
and modification time its log had when the summary was taken. The store updates it when a
session is created and at each `turn/end` (not per event) by appending the entry, one line in
one `write(2)`, to a journal beside the file (`journal.jsonl`): an update costs the same however
many sessions are stored. A reader applies the journal's lines over the file's entries. Whoever
writes the file (a listing that found something to correct, or an update once the journal has
grown past `_JOURNAL_FOLD` bytes) folds the journal in: the whole file is written aside and
renamed over the old one, so a reader sees one or the other, and records how much of the
journal it holds; past `_JOURNAL_FOLD` the journal is then started anew. Other processes may
write both meanwhile (their own sessions): each is read again whenever it changed, and what a
lost write would hide (a line appended to a journal as it was started anew, a file renamed over
another's) is found by two staleness checks against the directory, which a reader (a listing, a
look-up of children) makes; an update keeps the root's recorded stamp, so it lists nothing:

- a session directory that is new or gone is summarized from its log or dropped. The file
  records the root's (link count, modification time) as they were before the listing it
  reflects was taken, and the root is listed again only when they differ: any directory made
  or removed since changes them. A time too recent to tell a later change in the same clock
  tick apart is not recorded (the next reader lists the root again);
- an entry about to be listed whose log no longer has the recorded size and time is
  summarized again.

A missing or unreadable index is rebuilt from the logs.

The file is JSON lines: first `{"version", "root", "cwds", "journal"}` (`journal`: the journal's
inode and the bytes of it the file holds), then one line per working directory (in the order of
`cwds`), an object of columns (one array per field). A listing of one working directory parses
only its line, and a write of the file serializes only the lines that changed (the others are
written back as they were read). A journal line is an entry's fields as one JSON array, its cwd
second. An entry in memory is a named tuple of plain values (`_Row`): one container an entry,
which holds no other (see `gc_paused`).

The additional roots of an entry (`roots`) were added to the format without a new version: they
are written only for a session that has some (a `roots` column on a line where one entry has
some, a tenth field on a journal line), so an entry without is written as before, and an index
written before them loads (its entries: no additional roots, until a log's change has them
summarized again).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import repeat
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from acp_agent.session.errors import SessionLogDamaged, UnsupportedVersion
from acp_agent.session.events import USER_SOURCES, SessionHeader, UserMessageData
from acp_agent.session.files import LogFile, append_line, private_dir
from acp_agent.session.roots import ROOTS_EVENT, RootsData
from acp_agent.session.titles import TITLE_EVENT, TitleData, Titles, session_title

log = logging.getLogger(__name__)

INDEX_DIR = ".index"
"""The index's directory under the root: its writes leave the root's modification time alone."""
INDEX_FILE = "index.json"
JOURNAL_FILE = "journal.jsonl"
"""Under `INDEX_DIR`: the entries of the updates since the file last folded them in, a line each."""
_JOURNAL_FOLD = 1 << 18
"""Journal bytes past which the next write of the file folds them in and starts the journal anew
(about 1,200 entries: a reader parses at most that many lines the file does not hold)."""
SESSION_FILE = "session.jsonl"
CHILDREN_FILE = "children"
"""In a session's directory: the ids of the children it started, one a line, appended by the
process that holds the session (so never by two at once); every new session gets one."""
TITLE_MARK = TITLE_EVENT.encode()
ROOTS_MARK = ROOTS_EVENT.encode()
"""What a line that logs a title or a set of roots holds: the others are not parsed past the first message."""
_VERSION = 3
_COLUMNS = ("id", "parentSession", "createdAt", "updatedAt", "title", "prompted", "size", "mtimeNs")
"""A working directory's line: one array per field, entry `n` of each making its entry `n`."""
_ROOTS_COLUMN = "roots"
"""A line's column of additional roots: only on a line where an entry has some."""
_JOURNAL_FIELDS = 9
"""A journal line's fields for an entry without additional roots (one with some has a tenth)."""
_RACY_NS = 2_000_000_000
"""A root modified this recently may change again within the same tick of a coarse clock (two
seconds covers the coarsest file systems) without its time changing: not recorded."""
Stamp = tuple[int, int]
"""A log's (size, modification time in ns): a summary taken at that stamp is still true."""
_Key = str | None
"""A line of the file: the working directory its sessions' headers name, as they name it."""


class SessionSummary(NamedTuple):
    """What a listing shows of a stored session, and who started it (a tuple: thousands are made
    for one listing, and a tuple is the cheapest object to make)."""

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
    roots: str | None = None
    """The additional directories of the last `session/roots` event, one plain value (`packed_roots`);
    None: the cwd alone."""

    @property
    def additional_directories(self) -> list[str]:
        """The additional directories of the last `session/roots` event, in its order."""
        return [] if self.roots is None else self.roots.split("\0")


def packed_roots(directories: Sequence[str]) -> str | None:
    """Additional directories as one string, joined by NUL (which no path holds), or None for
    none: an entry holds no container (see `_Row`)."""
    return "\0".join(directories) if directories else None


class _Row(NamedTuple):
    """An entry in memory: a `SessionSummary`'s fields, then the stamp of its log (made with
    `tuple.__new__` where thousands are read at once)."""

    id: str
    cwd: str | None
    parent_session: str | None
    created_at: int
    updated_at: int
    title: str | None
    prompted: bool
    roots: str | None
    size: int
    mtime_ns: int


_new_tuple = tuple.__new__


class SessionIndex:
    """The index of the sessions under `root`, held in memory and in `root/.index/` (the file
    and its journal)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._path = root / INDEX_DIR / INDEX_FILE
        self._journal = root / INDEX_DIR / JOURNAL_FILE
        self._raw: dict[_Key, bytes] = {}
        """Each working directory's line as the file has it, while nothing here changed it."""
        self._groups: dict[_Key, dict[str, _Row]] = {}
        """The working directories whose line was parsed (or made here): their entries by id."""
        self._normal: dict[str, str] = {}
        self._file_id: tuple[int, int, int] | None = None
        """The index file's (inode, size, modification time) when it was read or written here."""
        self._root_stamp: Stamp | None = None
        """The root's (link count, modification time) before the listing the entries reflect."""
        self._journal_at: tuple[int, int] | None = None
        """The journal's (inode, bytes) read: its lines up to there are applied or in `_pending`."""
        self._pending: dict[str, _Row] = {}
        """The journal's entries read, by id: applied to each line parsed, folded in by a write."""
        self._changed = False

    def summaries(self, cwd: str | None = None) -> list[SessionSummary]:
        """The top-level sessions (of `cwd`, normalized, when given), each checked against its log."""
        self._sync()
        root = os.fspath(self.root)

        def wanted(key: _Key) -> bool:
            return cwd is None or (key is not None and self._normalized(key) == cwd)

        listed: dict[str, SessionSummary] = {}  # by id: an entry that moved lines is listed once
        stat, make = os.stat, tuple.__new__  # the loop runs once per stored session: no call it can spare
        with gc_paused():
            for key in [key for key in self._keys() if wanted(key)]:
                for session_id, row in list(self._group(key).items()):
                    if row.parent_session is not None:
                        continue  # a child
                    try:
                        log_stat = stat(
                            f"{root}/{session_id}/{SESSION_FILE}"
                        )  # a str: pathlib costs more than the stat
                    except FileNotFoundError:
                        continue  # gone: not listed (its entry goes once its directory does)
                    if log_stat.st_size != row.size or log_stat.st_mtime_ns != row.mtime_ns:
                        fresh = self._summarize(session_id)
                        if fresh is None or fresh.parent_session is not None or not wanted(fresh.cwd):
                            continue  # gone, or no longer what this listing shows (its header changed)
                        row = fresh
                    listed[session_id] = make(SessionSummary, row[:8])
        self._save_if_changed()
        return list(listed.values())

    def children_of(self, session_id: str) -> list[str]:
        """The ids of the stored sessions whose header names `session_id` as their parent: from
        the session's own `children` file (its children as they were created, those deleted by
        hand left out), or for a log from before such files, from the index."""
        try:
            listed = (self.root / session_id / CHILDREN_FILE).read_text(encoding="utf-8").split()
        except FileNotFoundError:
            self._sync()
            children = {
                child
                for rows in self._all().values()
                for child, row in rows.items()
                if row.parent_session == session_id
            }
            self._save_if_changed()
            return sorted(children)
        return sorted(child for child in set(listed) if os.path.isdir(self.root / child))

    def add_child(self, parent: str, child: str) -> None:
        """Note a new child in its parent's `children` file, when the parent is stored here."""
        if (self.root / parent).is_dir():
            append_line(self.root / parent / CHILDREN_FILE, child)

    def record(self, summary: SessionSummary, stamp: Stamp) -> None:
        """Append a session's summary, taken when its log had `stamp`, to the journal.

        Nothing is read (unless the journal has grown past `_JOURNAL_FOLD`: the file is then
        read, the journal folded in and the file written), and the root is not listed: the next
        listing still finds what was made or removed since the recorded root stamp (the
        session's own directory included). A session made beside thousands of stored ones costs
        neither a listing of them nor a write of their entries."""
        try:
            private_dir(self._journal.parent)
            fields = [*summary, *stamp] if summary.roots is not None else [*summary[:7], *stamp]
            append_line(self._journal, json.dumps(fields, separators=(",", ":")))
            grown = self._journal.stat().st_size > _JOURNAL_FOLD
        except OSError as exc:
            log.warning("cannot write the session index %s: %s", self._journal, exc)
            return
        if grown:
            self._sync_file()
            self._save_if_changed()

    # -- keeping in step with the directory and other writers ---------------------------------

    def _sync(self) -> None:
        self._sync_file()
        root = _root_stamp(self.root)
        if root is None or root == self._root_stamp:
            return
        groups = self._all()
        known = {session_id for rows in groups.values() for session_id in rows}
        names = {entry.name for entry in os.scandir(self.root) if entry.is_dir() and entry.name != INDEX_DIR}
        for gone in known.difference(names):
            self._drop(gone)  # its directory was deleted by hand
        for name in names.difference(known):
            self._summarize(name)
        if time.time_ns() - root[1] < _RACY_NS:
            self._root_stamp = None  # listed again next time
        elif root != self._root_stamp:
            self._root_stamp = root
            self._changed = True

    def _sync_file(self) -> None:
        file_id = _file_id(self._path)
        if file_id is None or file_id != self._file_id:
            self._read(file_id)
        self._read_journal()

    def _read_journal(self) -> None:
        """The journal's lines not read yet (of the journal the file names, those past what the
        file holds; of a journal started anew since, all): each applied to the lines parsed and
        kept for those parsed later. A line still being written is read next time; a damaged one
        is skipped (the staleness checks repair what it would have said)."""
        try:
            with self._journal.open("rb") as file:
                stat = os.fstat(file.fileno())  # of the file opened: the journal may be started anew meanwhile
                at = self._journal_at
                start = at[1] if at is not None and at[0] == stat.st_ino and at[1] <= stat.st_size else 0
                if start == stat.st_size:
                    return  # nothing appended since the last read
                file.seek(start)
                data = file.read(stat.st_size - start)
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("cannot read the session index journal %s: %s", self._journal, exc)
            return
        complete = data[: data.rfind(b"\n") + 1]
        read: dict[str, _Row] = {}
        for line in complete.splitlines():
            try:
                row = _journal_row(parse_json(line))
            except ValueError as exc:
                log.warning("skipping a line of the session index journal %s: %s", self._journal, exc)
                continue
            read[row.id] = row  # a session's latest entry
        self._pending.update(read)
        for key, rows in self._groups.items():
            self._apply(key, rows, read.values())
        self._journal_at = (stat.st_ino, start + len(complete))

    def _read(self, file_id: tuple[int, int, int] | None) -> None:
        """The index file's lines, or none (all are summarized again) when it is missing or unreadable."""
        self._raw, self._groups, self._root_stamp = {}, {}, None
        self._journal_at, self._pending = None, {}
        self._file_id = file_id
        self._changed = True  # written again if it turns out to be missing or unreadable
        if file_id is None:
            return
        try:
            with self._path.open("rb") as file:
                first, *lines = file.read().split(b"\n")
            root, keys, journal = _catalogue(parse_json(first))
            if len(lines) != len(keys) + 1 or lines[-1]:
                raise ValueError(f"{len(keys)} working directories named, {len(lines) - 1} lines")
        except (OSError, ValueError) as exc:
            log.warning("rebuilding the session index %s: %s", self._path, exc)
            return
        self._raw, self._root_stamp, self._journal_at, self._changed = (
            dict(zip(keys, lines, strict=False)),
            root,
            journal,
            False,
        )

    def _rebuild(self, problem: ValueError) -> None:
        log.warning("rebuilding the session index %s: %s", self._path, problem)
        self._raw, self._groups, self._root_stamp, self._changed = {}, {}, None, True
        self._sync()  # lists the root: every session is summarized from its log

    def _keys(self) -> list[_Key]:
        return list(dict.fromkeys([*self._raw, *self._groups, *(row.cwd for row in self._pending.values())]))

    def _group(self, key: _Key) -> dict[str, _Row]:
        """The entries of one working directory, its line parsed on first use (an unreadable line
        rebuilds the whole index)."""
        rows = self._groups.get(key)
        if rows is None:
            raw = self._raw.get(key)
            try:
                rows = {} if raw is None else _rows(parse_json(raw), key)
            except ValueError as exc:
                self._rebuild(exc)
                return self._groups.setdefault(key, {})
            self._apply(key, rows, self._pending.values())
            self._groups[key] = rows
        return rows

    def _apply(self, key: _Key, rows: dict[str, _Row], entries: Iterable[_Row]) -> None:
        """Put the journal's `entries` of `key` in its `rows`, and take out of them those of
        sessions now of another cwd; a line so changed is no longer the one the file has."""
        changed = False
        for row in entries:
            if row.cwd == key:
                changed |= rows.get(row.id) != row
                rows[row.id] = row
            elif rows.pop(row.id, None) is not None:
                changed = True
        if changed:
            self._raw.pop(key, None)

    def _all(self) -> dict[_Key, dict[str, _Row]]:
        for key in self._keys():
            self._group(key)
        return self._groups

    def _summarize(self, session_id: str) -> _Row | None:
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
        row = _Row(*summary, *stamp)
        self._put(row)
        return row

    def _put(self, row: _Row) -> None:
        self._drop(row.id)  # from any line it was in: a load may give a session another cwd
        self._group(row.cwd)[row.id] = row
        self._touch(row.cwd)

    def _drop(self, session_id: str) -> None:
        """Drop an entry from the lines parsed here (a line not parsed yet may still hold it: a
        listing of it finds its log changed or gone)."""
        self._pending.pop(session_id, None)
        for key, rows in self._groups.items():
            if rows.pop(session_id, None) is not None:
                self._touch(key)

    def _touch(self, key: _Key) -> None:
        self._raw.pop(key, None)
        self._changed = True

    def _normalized(self, cwd: str) -> str:
        """`os.path.normpath(cwd)`, once per working directory (thousands of entries share a few)."""
        normal = self._normal.get(cwd)
        if normal is None:
            normal = self._normal[cwd] = os.path.normpath(cwd)
        return normal

    def _save_if_changed(self) -> None:
        """Write the index aside and rename it over the old one, the journal read folded in (and
        the journal started anew past `_JOURNAL_FOLD`); a failure only costs a rebuild."""
        journal = self._journal_at
        grown = journal is not None and journal[1] > _JOURNAL_FOLD
        if not (self._changed or grown) or not self.root.is_dir():
            return
        self._changed = False
        for key in {row.cwd for row in self._pending.values()}:
            self._group(key)  # parsed with the journal's entries, so written with them
        self._pending = {}
        keys, lines = [], []
        for key in self._keys():
            raw = self._raw.get(key)
            if raw is None:
                rows = self._groups[key]
                if not rows:
                    del self._groups[key]
                    continue
                raw = self._raw[key] = _dump(rows)
            keys.append(key)
            lines.append(raw)
        first = {"version": _VERSION, "root": self._root_stamp, "cwds": keys, "journal": journal}
        data = b"\n".join([json.dumps(first, separators=(",", ":")).encode(), *lines, b""])
        try:
            private_dir(self._path.parent)
            LogFile.create(self._path, [data]).close()
            if grown:  # a line another process appends meanwhile is lost: the staleness checks repair it
                LogFile.create(self._journal, []).close()
        except OSError as exc:
            log.warning("cannot write the session index %s: %s", self._path, exc)
            return
        self._file_id = _file_id(self._path)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off while many objects are made at once (a log read back, a
    listing): every collection they trigger would walk all those made so far again, and the
    first full one in a fresh process walks everything it imported."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _stat(path: str | Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _stamp(path: str | Path) -> Stamp | None:
    stat = _stat(path)
    return None if stat is None else (stat.st_size, stat.st_mtime_ns)


def _file_id(path: Path) -> tuple[int, int, int] | None:
    stat = _stat(path)
    return None if stat is None else (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _root_stamp(root: Path) -> Stamp | None:
    stat = _stat(root)
    return None if stat is None else (stat.st_nlink, stat.st_mtime_ns)


def _dump(rows: dict[str, _Row]) -> bytes:
    columns = list(zip(*rows.values(), strict=False))
    del columns[1]  # the cwd: the line's own
    roots = columns.pop(6)
    data = {name: list(column) for name, column in zip(_COLUMNS, columns, strict=True)}
    if any(roots):
        data[_ROOTS_COLUMN] = list(roots)
    return json.dumps(data, separators=(",", ":")).encode()


_NONE = type(None)
_ROW_TYPES: tuple[set[type], ...] = (
    {str},
    {str, _NONE},
    {str, _NONE},
    {int},
    {int},
    {str, _NONE},
    {bool},
    {str, _NONE},
    {int},
    {int},
)
"""The types each field of an entry may have, in `_Row`'s order."""


def _catalogue(data: Any) -> tuple[Stamp | None, list[_Key], tuple[int, int] | None]:
    """The root stamp, the working directories and the journal's position of an index file's
    first line."""
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        raise ValueError("not an index this version wrote")
    keys = data.get("cwds")
    if type(keys) is not list or not set(map(type, keys)) <= {str, _NONE} or len(set(keys)) != len(keys):
        raise ValueError("not an index this version wrote: its working directories")
    return _pair(data.get("root"), "its root"), keys, _pair(data.get("journal"), "its journal")


def _pair(value: Any, what: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if type(value) is not list or len(value) != 2 or set(map(type, value)) != {int}:
        raise ValueError(f"not an index this version wrote: {what}")
    return value[0], value[1]


def _rows(data: Any, cwd: _Key) -> dict[str, _Row]:
    """The entries of one working directory's line; ValueError for anything this version did not write."""
    columns: list[Any] = [data.get(name) for name in _COLUMNS] if isinstance(data, dict) else []
    if not columns or any(type(column) is not list for column in columns):
        raise ValueError(f"the line of {cwd!r} is not one this version wrote")
    ids, parents, created, updated, titles, prompted, sizes, mtimes = columns
    roots = data.get(_ROOTS_COLUMN)
    if roots is None:
        roots = [None] * len(ids)  # no entry of the line has additional roots
    columns.insert(6, roots)
    expected = (_ROW_TYPES[0], *_ROW_TYPES[2:])  # a line's columns: its cwd is the line's own
    if (
        type(roots) is not list
        or len({len(column) for column in columns}) != 1
        or any(not set(map(type, c)) <= t for c, t in zip(columns, expected, strict=True))
    ):
        raise ValueError(f"the line of {cwd!r} is not one this version wrote: its columns")
    fields = zip(ids, [cwd] * len(ids), parents, created, updated, titles, prompted, roots, sizes, mtimes, strict=True)
    return dict(zip(ids, map(_new_tuple, repeat(_Row), fields), strict=True))


def _journal_row(data: Any) -> _Row:
    """An entry from a journal line; ValueError for anything this version did not write."""
    if type(data) is list and len(data) == _JOURNAL_FIELDS:
        data.insert(7, None)  # no additional roots
    if (
        type(data) is not list
        or len(data) != len(_ROW_TYPES)
        or any(type(v) not in t for v, t in zip(data, _ROW_TYPES, strict=False))
    ):
        raise ValueError("not an entry this version wrote")
    return _new_tuple(_Row, data)


# -- a summary from the log itself ------------------------------------------------------------


def summarize(path: Path) -> SessionSummary:
    """The header, the first user message, the titles and the sets of roots logged (lines are
    read to the end, only those that name a title or a set of roots parsed after the first
    message) and the last event's time (the file is read backwards from its end until a line
    parses)."""
    with path.open("rb") as file:
        header = read_header(path, file.readline())
        titles = Titles()
        roots: list[str] = []
        prompted = False
        for line in file:
            if prompted and TITLE_MARK not in line and ROOTS_MARK not in line:
                continue
            try:
                obj = json_object(line)
                kind = obj.get("type")
                if kind == TITLE_EVENT:
                    titles = titles.named(TitleData.model_validate(obj.get("data")))
                elif kind == ROOTS_EVENT:
                    roots = RootsData.model_validate(obj.get("data")).directories
                elif kind == "user/message" and not prompted:
                    message = UserMessageData.model_validate(obj.get("data"))
                    if message.source.kind in USER_SOURCES:
                        titles, prompted = titles._replace(first_message=session_title(message.content)), True
            except ValueError:  # damage is for `load` to report; a listing skips the line
                continue
        updated_at = _last_time(file)
    return SessionSummary(
        id=header.id,
        cwd=header.cwd,
        parent_session=header.parent_session,
        created_at=header.created_at,
        updated_at=header.created_at if updated_at is None else updated_at,
        title=titles.shown,
        prompted=prompted,
        roots=packed_roots(roots),
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


def parse_json(data: bytes) -> Any:
    """`json.loads`, every failure a `ValueError`: nesting past the parser's stack (a
    `RecursionError` of its own) included, so a damaged file is refused like any other."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested deeper than the JSON parser allows") from None


def json_object(line: bytes) -> dict[str, Any]:
    obj = parse_json(line)
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def read_header(path: Path, line: bytes) -> SessionHeader:
    try:
        return SessionHeader.model_validate(json_object(line))
    except ValueError as exc:
        raise SessionLogDamaged(path, 1, f"{type(exc).__name__}: {exc}") from exc
