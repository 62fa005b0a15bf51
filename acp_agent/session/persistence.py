"""JSONL persistence: one directory per session, written behind the log, repaired on load."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator, Sequence
from contextlib import suppress
from functools import partial
from itertools import chain
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, BinaryIO, Final, NamedTuple, TypeVar

import anyio
from pydantic import BaseModel

from acp_agent.kernel._compact import compacted
from acp_agent.kernel.context import ServiceKey
from acp_agent.kernel.scope import Disposer
from acp_agent.kernel.tables import take
from acp_agent.session.content import ReasoningDelta, TextDelta
from acp_agent.session.errors import (
    AlreadyAttached,
    InvalidSessionId,
    InvariantViolation,
    LogUnwritable,
    MisplacedLog,
    SessionBusy,
    SessionLogDamaged,
    SessionNotFound,
    UnknownEventType,
    UnsupportedVersion,
)
from acp_agent.session.events import (
    USER_SOURCES,
    AssistantChunkEvent,
    EventOf,
    SessionEvent,
    SessionHeader,
    StreamedChunk,
    ToolError,
    TurnInterrupted,
    UserMessageEvent,
)
from acp_agent.session.files import LogFile, SessionLock, append_line, check_sessions_directory, private_dir
from acp_agent.session.index import (
    CHILDREN_FILE,
    INDEX_DIR,
    SESSION_FILE,
    SessionIndex,
    SessionSummary,
    gc_paused,
    json_object,
    packed_roots,
    read_header,
)
from acp_agent.session.invariants import LogState
from acp_agent.session.log import Session, closing_events
from acp_agent.session.registry import EventRegistry
from acp_agent.session.roots import RootsEvent, logged_directories
from acp_agent.session.titles import TitleEvent, Titles, session_title

log = logging.getLogger(__name__)

INTERRUPTED_MESSAGE = "interrupted: the process stopped before this call finished"
LOCK_WAIT_SECONDS = 3.0
"""How long opening a session waits for another process to let go of it (an editor restarting its
agent while the old process is still shutting down)."""
_LOCK_POLL_SECONDS = 0.05

D = TypeVar("D", bound=BaseModel)


class StoredExtent(NamedTuple):
    """How much of a log file a load kept: what `attach` continues after."""

    header: SessionHeader
    """The header as the file has it (a caller may hand `attach` another one: then it rewrites)."""
    events: int
    """How many events are in the file (those a repair added are not)."""
    end: int
    """The bytes that hold the header and those events, without the last newline."""


class LoadedSession(NamedTuple):
    """A log read back from disk; `repaired` tells that a torn tail was dropped or closed."""

    header: SessionHeader
    events: list[SessionEvent]
    repaired: bool
    extent: StoredExtent | None = None
    """Where the file's kept part ends; None for a log not read from this store's file."""
    state: LogState | None = None
    """Where the log stands after `events`, which then hold only some of its events (see
    `read_log`); None when `events` is the whole log (checked again by `Session`)."""


def _line(model: BaseModel) -> bytes:
    if type(model) is AssistantChunkEvent and model.ignorable is None:
        return _chunk_line(model.fields, model)
    return _serialized(model)


def _chunk_line(streamed: StreamedChunk, event: AssistantChunkEvent | None = None) -> bytes:
    """A streamed chunk's line: its delta's, joined from its fields, else its event's (`event`,
    made here when the chunk came as fields only)."""
    return _delta_line(streamed) or _serialized(event or AssistantChunkEvent.streamed(streamed))


def _serialized(model: BaseModel) -> bytes:
    # The model's own serializer, as model_dump_json uses it, minus a str round trip and per-call
    # argument handling.
    return type(model).__pydantic_serializer__.to_json(model, by_alias=True, exclude_none=True) + b"\n"


_DELTA_TYPES: Final = {TextDelta: b"text-delta", ReasoningDelta: b"reasoning-delta"}
_DELTA_LINE: Final = (
    b'{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":%d,"step":%d,'
    b'"chunk":{"type":"%s","index":%d,"text":%s}}}\n'
)


def _delta_line(streamed: StreamedChunk) -> bytes | None:
    """A streamed text or thought delta's line, joined from its fields: the same bytes as the
    serializer's for its event (a test holds them equal) in a sixth of the time, for the event a
    long answer logs by the thousand. None for another chunk, or a text that is not Unicode (a
    lone surrogate: the serializer's rule applies)."""
    seq, time, turn, step, chunk = streamed
    kind = _DELTA_TYPES.get(type(chunk))
    if kind is None:
        return None
    assert isinstance(chunk, (TextDelta, ReasoningDelta))
    try:
        text = encode_basestring(chunk.text).encode()
    except UnicodeEncodeError:
        return None
    return _DELTA_LINE % (seq, time, turn, step, kind, chunk.index, text)


class _Attachment:
    """An attached session's open log: made as the session is attached to it (the chunks leave
    memory, every event from now on is written), and what detaching it lets go of. The session
    holds its bound methods (`read_back`) and itself as its writer, not closures (README,
    Performance, on what an open session keeps). It holds its store but not its session, and its
    detach is a method of the store bound to it, not a closure that compares itself with the
    store's entry: such a closure is a reference cycle, which keeps a closed session's objects
    until the cyclic collector runs.

    A line that cannot be written refuses its event (`Session.write_with`) with `LogUnwritable`,
    naming the operating system's error and the session's directory."""

    __slots__ = ("store", "path", "file", "lock", "summary", "titles", "unsubscribe")

    def __init__(self, store: SessionStore, session: Session, path: Path, file: LogFile, lock: SessionLock) -> None:
        self.store = store
        self.path = path
        self.file = file
        self.lock = lock
        self.titles = _titles_of(session.events)
        self.summary = _summary_of(session, self.titles)
        session.archive(self.read_back)
        self.unsubscribe = session.write_with(self)

    def read_back(self) -> list[SessionEvent]:
        self.file.flush()
        return read_events(self.path, self.store.registry)

    def write(self, event: SessionEvent) -> None:
        try:
            self.file.append(_line(event))
        except OSError as exc:
            raise LogUnwritable(self.path.parent, exc) from exc
        summary = self.summary
        if event.type == "user/message" and not summary.prompted and _from_user(event):
            self.titles = self.titles._replace(first_message=session_title(event.data.content))
            self.summary = summary._replace(title=self.titles.shown, prompted=True)
        elif isinstance(event, TitleEvent):  # shown by a listing at once, not at the turn's end
            self.titles = self.titles.named(event.data)
            self.summary = summary._replace(title=self.titles.shown, updated_at=event.time)
            self.store.index.record(self.summary, self.file.stamp())
        elif isinstance(event, RootsEvent):  # the same: a load that names another set is listed with it
            self.summary = summary._replace(roots=packed_roots(event.data.directories), updated_at=event.time)
            self.store.index.record(self.summary, self.file.stamp())
        elif event.type == "turn/end":
            self.summary = summary._replace(updated_at=event.time)
            self.record()

    def record(self) -> None:
        """Put the summary in the index, with the log's stamp. Never raises: the line is written,
        and the index, a cache, corrects an entry it missed when it next finds the log changed."""
        try:
            stamp = self.file.stamp()
        except OSError as exc:
            log.warning("cannot read the stamp of %s: %s", self.path, exc)
        else:
            self.store.index.record(self.summary, stamp)

    def hold(self, streamed: StreamedChunk) -> None:
        """A chunk's line waits for the next write (see `SessionStore.flush`), unless the last
        write failed: then it is written now, with what was held, or refused."""
        if self.file.failure is not None:
            try:
                self.file.append(_chunk_line(streamed))
            except OSError as exc:
                raise LogUnwritable(self.path.parent, exc) from exc
        elif self.file.hold(_chunk_line(streamed)):
            self.store._holding.append(self.file)


class SessionStore:
    """Session logs under `root`, as `root/<session id>/session.jsonl`, private to the user (files
    0600, directories 0700). A session attached here is locked against every other process (and
    every other store) until it is detached."""

    def __init__(self, root: Path, *, registry: EventRegistry, lock_wait: float = LOCK_WAIT_SECONDS) -> None:
        check_sessions_directory(root)
        self.root = root
        self.registry = registry
        self.lock_wait = lock_wait
        self.index = SessionIndex(root)
        self._attached: dict[str, _Attachment] = {}
        self._claims: dict[str, SessionLock] = {}
        self._holding: list[LogFile] = []
        """The logs that held a streamed chunk's line since the last `flush`."""

    def path_of(self, session_id: str) -> Path:
        """The log file of a session; ids that could leave `root` (or name the index's directory) are refused."""
        if session_id in ("", ".", "..", INDEX_DIR) or any(c in session_id for c in ("/", "\\", "\0")):
            raise InvalidSessionId(f"session id {session_id!r} cannot name a directory")
        return self.root / session_id / SESSION_FILE

    async def claim(self, session_id: str) -> Disposer:
        """Lock a stored session for this store before reading it back, waiting up to
        `lock_wait` seconds while another process has it open (then `SessionBusy`). `attach`
        takes the claim over; the disposer lets go of a claim nothing attached."""
        path = self.path_of(session_id)
        directory = path.parent
        if not directory.is_dir():
            raise SessionNotFound(f"no session log for {session_id!r} under {self.root}")
        _check_owner(path, session_id)  # before anything is made in a directory not its own
        if session_id in self._claims or session_id in self._attached:
            raise AlreadyAttached(f"session {session_id!r} is already open in this store")
        with anyio.move_on_after(self.lock_wait):
            while (lock := SessionLock.try_acquire(directory)) is None:
                await anyio.sleep(_LOCK_POLL_SECONDS)
        if lock is None:
            raise SessionBusy(session_id, self.lock_wait)
        self._claims[session_id] = lock

        def unclaim() -> None:
            if self._claims.get(session_id) is lock:
                take(self._claims, session_id)
                lock.release()

        return unclaim

    def attach(self, session: Session, *, loaded: LoadedSession | None = None) -> Disposer:
        """Write the session's log and then every event it appends, each one handed to the
        operating system before `append` returns. A `loaded` session (read back from this store)
        continues its file: the repaired tail replaces the torn one, and the file is rewritten only
        when the header changed. The session's lock (its claim, or taken now) is held until the
        returned disposer (or `close`) detaches it."""
        if session.id in self._attached:
            raise AlreadyAttached(f"session {session.id!r} is already attached")
        path = self.path_of(session.id)
        lock = take(self._claims, session.id)
        if lock is None:
            try:
                private_dir(path.parent)
                lock = SessionLock.try_acquire(path.parent)
            except OSError as exc:  # the sessions directory went read-only, full, or away
                raise LogUnwritable(path.parent, exc) from exc
            if lock is None:
                raise SessionBusy(session.id, 0)
        file: LogFile | None = None
        try:
            extent = loaded.extent if loaded is not None else None
            if extent is None:
                file = LogFile.create(path, [_line(session.header), *(_line(event) for event in session.all_events())])
                # A new log: its children file, and its place in its parent's.
                append_line(path.parent / CHILDREN_FILE, "")
                if session.header.parent_session is not None:
                    self.index.add_child(session.header.parent_session, session.id)
            else:
                tail = b"".join(_line(event) for event in session.events_from(extent.events))
                if extent.header == session.header:
                    file = LogFile.reopen(path, extent.end)
                    file.append(tail)
                else:  # the stored events' bytes as they are, after the new header
                    file = LogFile.create(path, chain([_line(session.header)], _stored_events(path, extent), [tail]))
        except BaseException as exc:
            if file is not None:
                with suppress(OSError):  # what it could not write is what fails the attach
                    file.close()
            lock.release()
            if isinstance(exc, OSError):
                raise LogUnwritable(path.parent, exc) from exc
            raise
        attachment = self._attached[session.id] = _Attachment(self, session, path, file, lock)
        if extent is None or extent.header != session.header:  # its place in the index
            attachment.record()
        return partial(self._detach, session.id, attachment)

    def _detach(self, session_id: str, attachment: _Attachment) -> None:
        if self._attached.get(session_id) is attachment:
            take(self._attached, session_id)
            attachment.unsubscribe()
            try:
                attachment.file.close()
            except OSError as exc:  # the session's last turn said so already
                log.warning("session %s: lines its log held could not be written: %s", session_id, exc)
            attachment.lock.release()

    def flush(self) -> None:
        """Hand every held line (the streamed chunks' of every attached log) to the operating
        system. The server's writer runs this before each write to stdout: a chunk's frame never
        reaches the wire before its line. Each other event's line is written as it is logged,
        with what its log held, so a chunk's line waits at most until its frame goes out or the
        next other event of its session, whichever is first.

        A line that cannot be written (a full disk) stays held and is only logged here: the
        session's next line fails its turn, as any other line that cannot be written does (a
        failure here would stop the writer of every session's frames)."""
        for file in self._holding:
            try:
                file.flush()
            except OSError as exc:
                log.warning("cannot write a session log: %s", exc)
        self._holding.clear()

    def close(self) -> None:
        """Detach every session and let go of every claim."""
        for session_id, attachment in list(self._attached.items()):
            self._detach(session_id, attachment)
        for lock in self._claims.values():
            lock.release()
        self._claims.clear()

    def load(self, session_id: str) -> LoadedSession:
        """Read a session's log back (see `read_log`); a log whose header names another session
        (its directory copied or renamed by hand) is refused (`MisplacedLog`)."""
        self.flush()
        path = self.path_of(session_id)
        if not path.is_file():
            raise SessionNotFound(f"no session log for {session_id!r} under {self.root}")
        _check_owner(path, session_id)
        return read_log(path, self.registry)

    def header_of(self, session_id: str) -> SessionHeader | None:
        """A stored session's header, None if it cannot be read (a log that does not load may
        still say whose child it is)."""
        path = self.path_of(session_id)
        try:
            with path.open("rb") as file:
                return read_header(path, file.readline())
        except (OSError, SessionLogDamaged, UnsupportedVersion):
            return None

    def delete(self, session_id: str) -> None:
        """Remove a claimed session's directory and those of the sessions it started, recursively
        (its children first: a delete cut short leaves a parent that still names what remains).
        The claim goes with the directory that held its lock."""
        lock = self._claimed(session_id)
        for removed in [*reversed(self.descendants_of(session_id)), session_id]:
            shutil.rmtree(self.root / removed, ignore_errors=removed != session_id)
        take(self._claims, session_id)
        lock.release()

    def log_stored(self, session_id: str, event_cls: type[EventOf[D]], data: D) -> SessionEvent:
        """Append one event to a claimed stored session no agent holds (a title set on a closed
        session): read back and repaired as a load does, attached for that one line. The claim
        goes with the attachment."""
        self._claimed(session_id)
        loaded = self.load(session_id)
        session = Session(loaded.header, registry=self.registry, seed=loaded.events, state=loaded.state)
        detach = self.attach(session, loaded=loaded)
        try:
            return session.append(event_cls, data)
        finally:
            detach()

    def _claimed(self, session_id: str) -> SessionLock:
        lock = self._claims.get(session_id)
        if lock is None:
            raise SessionNotFound(f"session {session_id!r} is not claimed here; claim it first")
        return lock

    def summaries(self, cwd: str | None = None) -> list[SessionSummary]:
        """The summaries of the stored top-level sessions (of `cwd`, normalized, when given),
        from the index, each checked against its log (see `SessionIndex`)."""
        self.flush()
        return self.index.summaries(cwd)

    def children_of(self, session_id: str) -> list[str]:
        """The ids of the stored sessions `session_id` started (whose header names it as
        `parentSession`), from the index."""
        return self.index.children_of(session_id)

    def descendants_of(self, session_id: str) -> list[str]:
        """The ids of the stored sessions `session_id` started, and theirs, recursively, each
        after its parent (from the parents' children files: no log is read)."""
        found: list[str] = []
        pending = [session_id]
        while pending:
            for child_id in self.children_of(pending.pop()):
                if child_id not in found and child_id != session_id:  # a cycle, only ever written by hand
                    found.append(child_id)
                    pending.append(child_id)
        return found


def _check_owner(path: Path, session_id: str) -> None:
    """Refuse a log whose header names another session than `session_id` (`MisplacedLog`). A
    missing log, or a header that does not read, is the load's to report."""
    try:
        with path.open("rb") as file:
            header = read_header(path, file.readline())
    except (FileNotFoundError, SessionLogDamaged, UnsupportedVersion):
        return
    if header.id != session_id:
        raise MisplacedLog(path, session_id, header.id)


def _from_user(event: SessionEvent) -> bool:
    return isinstance(event, UserMessageEvent) and event.data.source.kind in USER_SOURCES


def _titles_of(events: Sequence[SessionEvent]) -> Titles:
    """The titles the events gave their session (see `Titles`)."""
    first = next((event for event in events if _from_user(event)), None)
    titles = Titles(session_title(first.data.content) if isinstance(first, UserMessageEvent) else None)
    for event in events:
        if isinstance(event, TitleEvent):
            titles = titles.named(event.data)
    return titles


def _summary_of(session: Session, titles: Titles) -> SessionSummary:
    """What the index holds of a session, from the events it holds in memory (no chunk is part of
    it) and the titles they gave it."""
    header, events = session.header, session.events
    return SessionSummary(
        id=header.id,
        cwd=header.cwd,
        parent_session=header.parent_session,
        created_at=header.created_at,
        updated_at=events[-1].time if events else header.created_at,
        title=titles.shown,
        prompted=any(_from_user(event) for event in events),
        roots=packed_roots(logged_directories(events)),
    )


def read_log(path: Path, registry: EventRegistry) -> LoadedSession:
    """Parse and check a JSONL log, one line at a time. Only a torn tail is dropped: a last line
    without its newline (a write the stopped process never finished) that does not parse or
    may not come next, read no further than `_LINE_PIECE` bytes if it is longer. Any other line
    that is wrong (damaged, of an event type this version does not know, breaking the
    invariants) raises SessionLogDamaged naming it, wherever it is: the file is left as it is,
    that line and every line after it included. A turn left open is then closed as interrupted.

    The streamed chunks of a step that logged its `assistant/message` stay on disk: they are
    checked by what the rules read (seq, turn, step) and not built, since the message holds
    their blocks whole (a fork's seed reads them back, see `Session.all_events`). The chunks of
    a step that has no message (one a crash cut short) are kept, built in full."""
    with path.open("rb") as file, gc_paused():
        first = file.readline()
        header = read_header(path, first)
        reader = _LogReader(path, registry)
        position = len(first)
        end = position - first.endswith(b"\n")
        repaired = False
        for number, line in enumerate(_lines(file), start=2):
            if line is None:  # a long torn line, left unread
                repaired = True
                break
            problem = reader.feed(number, line)
            if problem is not None:
                if line.endswith(b"\n"):  # a whole line: not torn
                    raise SessionLogDamaged(path, number, _describe(problem)) from problem
                repaired = True
                break
            position += len(line)
            end = position - line.endswith(b"\n")
    events, state = reader.finish()
    extent = StoredExtent(header, state.next_seq, end)
    if state.open_turn is not None:
        repaired = True
        _close_open_turn(state, events)
    return LoadedSession(header, events, repaired, extent, state)


_LINE_PIECE = 1 << 20
"""How much of a line `_lines` reads at once: a longer one is held whole only once it is known to
end with its newline."""


def _lines(file: BinaryIO) -> Iterator[bytes | None]:
    """The lines of `file` from where it stands, each whole; None, and nothing after, for a last
    line longer than `_LINE_PIECE` without its newline (a torn one, left unread)."""
    while line := file.readline(_LINE_PIECE):
        if len(line) == _LINE_PIECE and not line.endswith(b"\n"):
            start = file.tell() - len(line)
            while (piece := file.read(_LINE_PIECE)) and b"\n" not in piece:
                pass
            if not piece:
                yield None
                return
            file.seek(start)
            line = file.readline()
        yield line


class _LogReader:
    """Checks a log's events in order and keeps those a loaded session holds in memory."""

    def __init__(self, path: Path, registry: EventRegistry) -> None:
        self.path = path
        self.registry = registry
        self.state = LogState(registry)
        self.events: list[SessionEvent] = []
        self._light = registry.event_class("assistant/chunk") is AssistantChunkEvent
        self._step_from = 0
        """Where the open step's events begin in `events`."""
        self._step_chunks: list[tuple[int, bytes]] = []
        """The open step's chunks so far (line number, line), unless it logged its message."""
        self._step_message = False

    def feed(self, number: int, line: bytes) -> Exception | None:
        """Check and keep the event on line `number`; the problem, if it may not come next."""
        try:
            obj = json_object(line)
            if self._light and obj.get("type") == "assistant/chunk" and (envelope := _chunk_envelope(obj)):
                self.state.check_chunk(*envelope)
                self.state.advance()
                if not self._step_message:
                    self._step_chunks.append((number, line))
                return None
            event = self.registry.parse(obj)
            self.state.check(event)
        except (ValueError, UnknownEventType, InvariantViolation) as exc:
            return exc
        self.state.apply(event)
        if event.type == "step/start":
            self._step_from, self._step_chunks, self._step_message = len(self.events), [], False
        elif event.type == "assistant/message":
            self._step_chunks, self._step_message = [], True
        elif event.type == "step/end":
            self._keep_step_chunks()
        self.events.append(compacted(event, split=False))  # thousands at once: see kernel/_compact.py
        return None

    def finish(self) -> tuple[list[SessionEvent], LogState]:
        self._keep_step_chunks()
        return self.events, self.state

    def _keep_step_chunks(self) -> None:
        """A step that ends without a message keeps its chunks, built now, in seq order."""
        if not self._step_chunks:
            return
        chunks = []
        for number, line in self._step_chunks:
            try:
                chunks.append(self.registry.parse(json_object(line)))
            except ValueError as exc:  # its envelope checked out, its chunk does not
                raise SessionLogDamaged(self.path, number, _describe(exc)) from exc
        self._step_chunks = []
        step = self.events[self._step_from :]
        self.events[self._step_from :] = sorted([*step, *chunks], key=_seq)


def _seq(event: SessionEvent) -> int:
    return event.seq


def _chunk_envelope(obj: dict[str, Any]) -> tuple[int, int, int] | None:
    """(seq, turn, step) of a chunk that has the envelope the writer gives every chunk; None
    for anything else, which is then parsed in full (and refused with pydantic's reasons)."""
    data, seq = obj.get("data"), obj.get("seq")
    if type(seq) is not int or type(obj.get("time")) is not int or type(data) is not dict:
        return None
    turn, step = data.get("turn"), data.get("step")
    if type(turn) is not int or type(step) is not int or type(data.get("chunk")) is not dict:
        return None
    return seq, turn, step


def _stored_events(path: Path, extent: StoredExtent) -> Iterator[bytes]:
    """The lines of the events a load kept, each with its newline, as the file has them (a
    megabyte at a time)."""
    with path.open("rb") as file:
        left = extent.end - len(file.readline())
        while left > 0 and (piece := file.read(min(left, 1 << 20))):
            left -= len(piece)
            yield piece
    if extent.events:
        yield b"\n"


def read_events(path: Path, registry: EventRegistry) -> list[SessionEvent]:
    """Every event of a log this process writes (whole lines only, checked when written)."""
    with path.open("rb") as file:
        file.readline()  # the header
        return [registry.parse(json_object(line)) for line in file if line.endswith(b"\n")]


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _close_open_turn(state: LogState, events: list[SessionEvent]) -> None:
    """Append what the stopped process never wrote: error results for started calls, the end of
    the open step, and an interrupted turn/end. They take the time of the last kept event."""
    error = ToolError(code="interrupted", message=INTERRUPTED_MESSAGE)
    for event in closing_events(state, events[-1].time, error, TurnInterrupted()):  # an open turn has its turn/start
        state.apply(event)
        events.append(event)


SESSIONS: Final = ServiceKey[SessionStore]("sessions")
"""`ctx.get(SESSIONS)`: The session store: logs written as events are appended, loaded, listed."""
