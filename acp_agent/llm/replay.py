"""The replay model: re-plays the model streams recorded in a scenario's session logs.

Every agent replays from its own cursor, keyed by its route (its lineage path), so which agent
asks first never changes what it is given. Loader plugin: `acp_agent.llm.replay`.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import re
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from pydantic import Field, TypeAdapter, field_validator

from acp_agent.kernel.context import SHUTDOWN, Context
from acp_agent.kernel.events import Next
from acp_agent.kernel.models import Model
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer, combine
from acp_agent.llm.errors import (
    FixtureNotFound,
    FixturesNotConsumed,
    InvalidScript,
    LlmError,
    ReplayError,
    ScriptExhausted,
    UnknownRoute,
)
from acp_agent.llm.holds import AGENT_KNOWN, NOTICES_DUE, NoticeCount, Routed
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.routes import assign_routes
from acp_agent.llm.service import STREAM, ModelStream
from acp_agent.session.content import (
    BlockEnd,
    BlockStart,
    ReasoningBlock,
    ReasoningDelta,
    StreamChunk,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
)
from acp_agent.session.routes import process_base

log = logging.getLogger(__name__)

PRIMARY = "session.jsonl"
OVERRIDE = "replay.override.json"
PRESEEDED = "sessions"
"""A scenario's `sessions/<id>/session.jsonl`: logs stored before the run (a session it loads)."""
NOTICE = "subagent/notice"
"""A background child's notice in its parent's log (`subagents.background`)."""
REPORT_TOOL = "report"
STOP_TOOL = "stop_agent"


class Gate(Model):
    """What one call of a route waits for, so concurrent agents meet as they did when recorded:
    `after`, other routes' calls served (a background child's call whose end sends its parent a
    notice waits until the parent has made the call before the one the notice joins); `notices`,
    how many notices the agent has received in all (the call a notice joins waits for it)."""

    after: dict[str, int] = {}
    streamed: dict[str, int] = {}
    """Other routes' calls streamed to their end (a call asking to stop a background child waits
    until the child's calls of the stopped turn have streamed: the stop finds it in its tools)."""
    notices: int = 0


Gates = dict[str, dict[int, Gate]]
"""Per route, per call index, its gate."""


class ChunksEntry(Model):
    """A recorded model call: stream these chunks."""

    kind: Literal["chunks"] = "chunks"
    chunks: list[StreamChunk]


class ThrowEntry(Model):
    """A call that failed: stream `chunks` (maybe none), then raise an `LlmError`."""

    kind: Literal["throw"] = "throw"
    chunks: list[StreamChunk] = []
    message: str
    code: str
    status: int | None = None


class HangEntry(Model):
    """A call that never finishes: stream a text block saying `partial`, then wait to be cancelled."""

    kind: Literal["hang"] = "hang"


ReplayEntry = Annotated[ChunksEntry | ThrowEntry | HangEntry, Field(discriminator="kind")]
Script = list[ReplayEntry]
_entries = TypeAdapter(list[ReplayEntry])
# Annotated: older pydantic releases cannot infer a TypeAdapter's type from a union or an alias.
_overrides: TypeAdapter[list[ReplayEntry] | dict[str, list[ReplayEntry]]] = TypeAdapter(
    list[ReplayEntry] | dict[str, list[ReplayEntry]]
)
_chunk: TypeAdapter[StreamChunk] = TypeAdapter(StreamChunk)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def derive_script(lines: list[dict[str, Any]], label: str) -> Script:
    """One entry per model call: a run of consecutive `assistant/chunk` events of one (turn, step).

    `lines` is a log file's lines, header first. Events before a child's `seedLength` belong to
    the parent it was forked from and are skipped. A step with no chunk (the request threw before
    streaming) contributes no call.
    """
    header, events = lines[0], lines[1:]
    script: Script = []
    run: list[dict[str, Any]] = []
    for event in [*events[header.get("seedLength") or 0 :], {"type": "<end>"}]:
        data = event.get("data") or {}
        if run and (event["type"] != "assistant/chunk" or _key(data) != _key(run[0])):
            if run[-1]["chunk"]["type"] != "finish":
                raise InvalidScript(label, *_key(run[0]))
            script.append(ChunksEntry(chunks=[_chunk.validate_python(d["chunk"]) for d in run]))
            run = []
        if event["type"] == "assistant/chunk":
            run.append(data)
    return script


def _key(data: dict[str, Any]) -> tuple[int, int]:
    return data["turn"], data["step"]


def call_keys(lines: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """The (turn, step) of each call `derive_script` finds in a log, in order."""
    header, events = lines[0], lines[1:]
    keys: list[tuple[int, int]] = []
    for event in events[header.get("seedLength") or 0 :]:
        if event["type"] == "assistant/chunk" and (not keys or keys[-1] != _key(event["data"])):
            keys.append(_key(event["data"]))
    return keys


def derive_gates(logs: dict[str, list[dict[str, Any]]], routes: dict[str, str], made_before: dict[str, int]) -> Gates:
    """The gates that make background children's notices join the calls they joined when the
    logs were written (see `Gate`). A notice joins the call after it in its parent's log; the
    child's call that sent it is the last of the notice's turn (a turn's end sends it) or that
    turn's next call asking for `report`; a stopped or cancelled turn's end needs no gate (the
    parent's own call caused it)."""
    by_route = {route: logs[name] for name, route in routes.items()}
    gates: Gates = {}
    reports_used: dict[tuple[str, int], int] = {}
    for name, route in routes.items():
        lines = logs[name]
        skip = made_before.get(lines[0]["id"], 0)
        calls, received = -skip, 0
        key: tuple[int, int] | None = None
        for event in lines[1 + (lines[0].get("seedLength") or 0) :]:
            if event["type"] == "assistant/chunk" and _key(event["data"]) != key:
                key, calls = _key(event["data"]), calls + 1
            elif event["type"] != "assistant/chunk":
                key = None
            if event["type"] != NOTICE or calls < 0:
                continue
            received += 1
            gates.setdefault(route, {}).setdefault(calls, Gate()).notices = received
            notice = event["data"]
            child = by_route.get(notice["route"])
            sent_by = _sending_call(child, notice, reports_used) if child is not None else None
            if sent_by is not None:
                gate = gates.setdefault(notice["route"], {}).setdefault(sent_by, Gate())
                gate.after[route] = max(gate.after.get(route, 0), calls)
        _stop_gates(lines, route, by_route, {log[0]["id"]: r for r, log in by_route.items()}, skip, gates)
    return gates


def _stop_gates(
    lines: list[dict[str, Any]],
    route: str,
    by_route: dict[str, list[dict[str, Any]]],
    ids: dict[str, str],
    skip: int,
    gates: Gates,
) -> None:
    """The gates of `route`'s calls that ask `stop_agent` to stop a child: each waits until the
    child's calls up to its first aborted turn have streamed."""
    keys = call_keys(lines)
    for event in lines[1:]:
        if event["type"] != "tool/call" or event["data"]["name"] != STOP_TOOL:
            continue
        child = ids.get(str(_argument(event["data"]["arguments"], "agent_id")))
        key = (event["data"]["turn"], event["data"]["step"])
        if child is None or key not in keys or keys.index(key) < skip:
            continue
        child_lines = by_route[child]
        aborted = [
            e["data"]["turn"]
            for e in child_lines[1:]
            if e["type"] == "turn/end" and e["data"]["reason"]["kind"] == "aborted"
        ]
        if aborted:
            made = sum(1 for turn, _ in call_keys(child_lines) if turn <= aborted[0])
            gate = gates.setdefault(route, {}).setdefault(keys.index(key) - skip, Gate())
            gate.streamed[child] = max(gate.streamed.get(child, 0), made)


def _argument(arguments: str, name: str) -> Any:
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value.get(name) if isinstance(value, dict) else None


def _sending_call(
    child: list[dict[str, Any]], notice: dict[str, Any], reports_used: dict[tuple[str, int], int]
) -> int | None:
    """The index of the child's call whose end sent `notice` (None: its parent stopped it)."""
    turn, keys = notice["turn"], call_keys(child)
    if notice["kind"] == "report":
        steps = [
            event["data"]["step"]
            for event in child[1:]
            if event["type"] == "tool/call" and event["data"]["turn"] == turn and event["data"]["name"] == REPORT_TOOL
        ]
        used = reports_used.get((notice["route"], turn), 0)
        reports_used[(notice["route"], turn)] = used + 1
        return keys.index((turn, steps[used]))
    ends = [e["data"]["reason"]["kind"] for e in child[1:] if e["type"] == "turn/end" and e["data"]["turn"] == turn]
    if ends in (["aborted"], ["disposed"]):
        return None
    # None too for a turn that asked no model (an ACP child's stand-in: its agent's calls are
    # another process's, which no gate of this one holds).
    return max((i for i, (call_turn, _) in enumerate(keys) if call_turn == turn), default=None)


def load_scripts(directory: Path) -> dict[str, Script]:
    """Every route's script from a scenario directory, overrides applied."""
    return load_fixtures(directory)[0]


def load_fixtures(directory: Path) -> tuple[dict[str, Script], Gates, dict[str, str]]:
    """Every route's script from a scenario directory, overrides applied; the gates; each
    recorded session id's route (see `ReplayModel.aliases`)."""
    primary = directory / PRIMARY
    if not primary.is_file():
        raise FixtureNotFound(f"replay fixture not found: {primary}")
    # Other JSONL files (a golden transcript, say) may sit beside the logs: a log opens with a header.
    logs = {
        path.name: lines
        for path in sorted(directory.glob("*.jsonl"))
        if (lines := read_jsonl(path)) and lines[0].get("type") == "session"
    }
    if PRIMARY not in logs:
        raise FixtureNotFound(f"replay fixture {primary} is not a session log (no session header)")
    routes = assign_routes(logs, PRIMARY)
    override_path = directory / OVERRIDE
    overrides: dict[str, Script] = {}
    if override_path.is_file():
        raw = _overrides.validate_json(override_path.read_bytes())
        overrides = {routes[PRIMARY]: raw} if isinstance(raw, list) else raw
    made_before = calls_made_before(directory)
    scripts = {
        route: overrides[route]
        if route in overrides
        else derive_script(logs[name], f"{name} ({route})")[made_before.get(logs[name][0]["id"], 0) :]
        for name, route in routes.items()
    }
    aliases = {logs[name][0]["id"]: route for name, route in routes.items()}
    return {**scripts, **overrides}, derive_gates(logs, routes, made_before), aliases


def _joined(chunks: list[StreamChunk]) -> dict[tuple[int, str], str]:
    """Each block's streamed text (deltas joined) and its final text, by (index, which)."""
    joined: dict[tuple[int, str], str] = {}
    for chunk in chunks:
        match chunk:
            case TextDelta() | ReasoningDelta():
                joined[chunk.index, "delta"] = joined.get((chunk.index, "delta"), "") + chunk.text
            case ToolCallDelta():
                joined[chunk.index, "delta"] = joined.get((chunk.index, "delta"), "") + chunk.arguments_delta
            case BlockEnd(block=TextBlock() | ReasoningBlock() as block):
                joined[chunk.index, "end"] = block.text
            case BlockEnd(block=ToolCallBlock() as block):
                joined[chunk.index, "end"] = block.arguments
    return joined


def substitute(chunks: list[StreamChunk], replacements: dict[str, str]) -> list[StreamChunk]:
    """`chunks` with each key of `replacements` replaced by its value, in every block's text and
    arguments, even where a delta boundary cuts it: a block's deltas are joined, replaced, and
    cut again where they were, a cut inside a replaced key moved to the replacement's end (so a
    session id streams whole in one delta, as normalization finds it)."""
    lengths: dict[int, list[int]] = {}
    for chunk in chunks:
        if isinstance(chunk, (TextDelta, ReasoningDelta, ToolCallDelta)):
            lengths.setdefault(chunk.index, []).append(
                len(chunk.arguments_delta if isinstance(chunk, ToolCallDelta) else chunk.text)
            )
    pieces = {
        index: _recut(text, lengths[index], replacements)
        for (index, which), text in _joined(chunks).items()
        if which == "delta"
    }
    out: list[StreamChunk] = []
    for chunk in chunks:
        match chunk:
            case TextDelta() | ReasoningDelta():
                chunk = chunk.model_copy(update={"text": pieces[chunk.index].pop(0)})
            case ToolCallDelta():
                chunk = chunk.model_copy(update={"arguments_delta": pieces[chunk.index].pop(0)})
            case BlockEnd(block=TextBlock() | ReasoningBlock() as block):
                chunk = chunk.model_copy(
                    update={
                        "block": block.model_copy(
                            update={"text": _recut(block.text, [len(block.text)], replacements)[0]}
                        )
                    }
                )
            case BlockEnd(block=ToolCallBlock() as block):
                arguments = _recut(block.arguments, [len(block.arguments)], replacements)[0]
                chunk = chunk.model_copy(update={"block": block.model_copy(update={"arguments": arguments})})
        out.append(chunk)
    return out


def _recut(text: str, lengths: list[int], replacements: dict[str, str]) -> list[str]:
    """`text` (pieces of `lengths`) with the replacements made, cut into as many pieces."""
    found = sorted(
        (match.start(), match.end(), replacements[match[0]])
        for match in re.finditer("|".join(map(re.escape, replacements)), text)
    )
    new, moved, cuts, last = [], 0, [], 0
    boundaries = list(itertools.accumulate(lengths[:-1]))
    for start, end, replacement in found:
        new.append(text[last:start] + replacement)
        cuts += [b + moved for b in boundaries if last <= b <= start]
        moved += len(replacement) - (end - start)
        cuts += [end + moved for b in boundaries if start < b < end]
        last = end
    new.append(text[last:])
    cuts += [b + moved for b in boundaries if b >= last and (not found or b > found[-1][0])]
    joined = "".join(new)
    edges = [0, *sorted(cuts), len(joined)]
    return [joined[a:b] for a, b in itertools.pairwise(edges)]


def calls_made_before(directory: Path) -> dict[str, int]:
    """Per session id, the model calls its pre-seeded log (`sessions/<id>/session.jsonl`) holds:
    an earlier run made them, so that session's script starts after them (as a fork child's
    starts after its seed). Overrides are this run's calls already."""
    made = {}
    for path in sorted((directory / PRESEEDED).glob("*/session.jsonl")):
        lines = read_jsonl(path)
        made[lines[0]["id"]] = len(derive_script(lines, str(path)))
    return made


class ReplayModel:
    """Serves `llm/stream` from per-route scripts; never defers to a real model."""

    def __init__(
        self,
        scripts: dict[str, Script],
        jitter: int | None = None,
        gates: Gates | None = None,
        aliases: dict[str, str] | None = None,
        route_base: str = "",
        places: dict[str, str] | None = None,
    ) -> None:
        # The routes of this process's agents only: another process (an ACP child run in the
        # same scenario) replays its own from the same fixtures (`session.routes.process_base`).
        self.scripts = {route: script for route, script in scripts.items() if process_base(route) == route_base}
        self.used: dict[str, int] = dict.fromkeys(self.scripts, 0)
        self._jitter = jitter
        self.gates = gates or {}
        self.aliases = aliases or {}
        """Text that stands for an agent's session id in the streams, and that agent's route: a
        recorded session id (the model named a background child by it), a script's
        `{{agent:<route>}}`. It streams as the id the agent of that route has in this run."""
        self.places = {text: path for text, path in (places or {}).items() if path}
        """A directory's placeholder in the recorded streams (`{{cwd}}`, as normalization writes
        it), and the path it streams as in this run: a path the model wrote in the recording
        (an extra root's file) names the same file in this one."""
        self.live: dict[str, str] = {}
        """The session id of each route that asked for a call."""
        self.streamed: dict[str, int] = {}
        """How many calls of each route have streamed to their end."""
        self._served: anyio.Event | None = None
        """Set at each call served, for calls waiting on other routes' (made on a wait only)."""

    def _gate(self, route: str) -> Gate | None:
        return self.gates.get(route, {}).get(self.used.get(route, 0))

    async def notices_due(self, agent: Routed, count: NoticeCount) -> None:
        """NOTICES_DUE listener: hold the agent's call until the notices it joined have come."""
        gate = self._gate(agent.route)
        if gate is not None:
            await count.until(gate.notices)

    async def _until(self, ready: Callable[[], bool]) -> None:
        """Wait until `ready()`, checked again whenever a call is asked for or served."""
        while not ready():
            self._served = self._served or anyio.Event()
            await self._served.wait()

    def _progress(self) -> None:
        if self._served is not None:
            self._served.set()
            self._served = None

    def known(self, route: str, session_id: str) -> None:
        """The session id of the agent on `route` in this run (from its calls, or `AGENT_KNOWN`)."""
        if self.live.get(route) != session_id:
            self.live[route] = session_id
            self._progress()

    async def listener(self, request: LlmRequest, next: Next[ModelStream]) -> ModelStream:
        self.known(request.route, request.session_id)
        gate = self._gate(request.route)
        if gate is not None:  # the other routes' calls this one follows
            await self._until(
                lambda: (
                    all(self.used.get(other, 0) >= n for other, n in gate.after.items())
                    and all(self.streamed.get(other, 0) >= n for other, n in gate.streamed.items())
                )
            )
        try:
            entry = self._take(request.route)
        except ReplayError as exc:
            log.error("replay: %s: %s", type(exc).__name__, exc)
            raise
        if (self.aliases or self.places) and not isinstance(entry, HangEntry):
            entry = await self._named(entry)
        return self._play(entry, request.route)

    async def _named(self, entry: ChunksEntry | ThrowEntry) -> ChunksEntry | ThrowEntry:
        """`entry` with each place it streams replaced by this run's path, and each alias by its
        agent's session id in this run (waiting until that agent has asked for a call, so its id
        is known)."""
        joined = _joined(entry.chunks)

        def streamed(text: str) -> bool:
            return any(text in block for block in joined.values())

        named = {alias: route for alias, route in self.aliases.items() if streamed(alias)}
        places = {text: path for text, path in self.places.items() if streamed(text)}
        if not named and not places:
            return entry
        await self._until(lambda: all(route in self.live for route in named.values()))
        replacements = places | {alias: self.live[route] for alias, route in named.items()}
        return entry.model_copy(update={"chunks": substitute(entry.chunks, replacements)})

    def _take(self, route: str) -> ReplayEntry:
        script = self.scripts.get(route)
        if script is None:
            raise UnknownRoute(route, sorted(self.scripts))
        index = self.used[route]
        if index >= len(script):
            raise ScriptExhausted(route, index, len(script))
        self.used[route] = index + 1
        self._progress()
        return script[index]

    async def _play(self, entry: ReplayEntry, route: str) -> AsyncGenerator[StreamChunk]:
        pause = self._pauses(route)
        chunks: list[StreamChunk]
        if isinstance(entry, HangEntry):
            chunks = [BlockStart(index=0, block_type="text"), TextDelta(index=0, text="partial")]
        else:
            chunks = entry.chunks
        for chunk in chunks:
            await pause()
            yield chunk
        if isinstance(entry, HangEntry):
            await anyio.sleep_forever()
        self.streamed[route] = self.streamed.get(route, 0) + 1
        self._progress()
        if isinstance(entry, ThrowEntry):
            raise LlmError(entry.message, entry.code, entry.status)

    def _pauses(self, route: str) -> Callable[[], Awaitable[None]]:
        """A checkpoint before each chunk (so a cancel lands between chunks); with jitter, a seeded
        random sleep of up to 3 ms, per route, to shake the scheduling of concurrent agents."""
        if self._jitter is None:
            return anyio.lowlevel.checkpoint
        rng = random.Random(f"{self._jitter}:{route}")

        async def pause() -> None:
            await anyio.sleep(rng.random() * 0.003 if rng.random() < 0.5 else 0)

        return pause

    def report(self) -> FixturesNotConsumed | None:
        """What the run left unasked, or None when every recorded call was replayed, or when no
        call was asked at all: a process that ran no prompt (one that only listed or loaded
        sessions, a scenario's first process for one that goes on in another) has nothing to
        say of the fixtures."""
        if not any(self.used.values()):
            return None
        progress = {
            route: (self.used[route], len(script))
            for route, script in self.scripts.items()
            if self.used[route] < len(script)
        }
        return FixturesNotConsumed(progress) if progress else None


# Loader plugin.
name = "replay"
inject = ("llm",)


class Config(PluginConfig):
    fixtures: str
    """Scenario directory: `session.jsonl`, the other `*.jsonl` logs, `replay.override.json`."""
    jitter: int | None = None
    """Seed for random pauses between chunks (transcripts must not change); none by default."""
    route_base: str = ""
    """The route base of this process (the `agents` row's `routeBase`): only the routes of its
    own agents are replayed, and held to be consumed (an ACP child's are its process's)."""
    places: dict[str, str] = {}
    """A directory's placeholder in the recorded streams and its path in this run (`{"{{cwd}}":
    ...}`; an empty path is left alone): the snapshot runner's, so a recorded call naming a file
    by its absolute path names this run's."""

    @field_validator("jitter", mode="before")
    @classmethod
    def _unset_is_none(cls, value: object) -> object:
        # `${ACP_AGENT_REPLAY_JITTER:-}` expands to "" when the variable is not set.
        return None if value == "" else value


def apply(ctx: Context, config: Config) -> Disposer:
    scripts, gates, aliases = load_fixtures(Path(config.fixtures))
    return install(ctx, ReplayModel(scripts, config.jitter, gates, aliases, config.route_base, config.places))


def install(ctx: Context, model: ReplayModel) -> Disposer:
    """Make `model` own `llm/stream`, and report unconsumed calls at shutdown (of a process
    that asked for any)."""

    async def check() -> None:
        unconsumed = model.report()
        if unconsumed is not None:
            log.error("replay: %s: %s", type(unconsumed).__name__, unconsumed)

    return combine(
        ctx.events.on(STREAM, model.listener),
        ctx.events.on(SHUTDOWN, check),
        ctx.events.on(NOTICES_DUE, model.notices_due),
        ctx.events.on(AGENT_KNOWN, model.known),
    )
