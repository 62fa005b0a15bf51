"""The replay model: re-plays the model streams recorded in a scenario's session logs.

Every agent replays from its own cursor, keyed by its route (its lineage path), so which agent
asks first never changes what it is given. Loader plugin: `acp_agent.llm.replay`.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from pydantic import Field, TypeAdapter, field_validator

from acp_agent.kernel import SHUTDOWN, Context, Disposer, PluginConfig, combine
from acp_agent.kernel.models import Model
from acp_agent.session.content import BlockStart, StreamChunk, TextDelta
from acp_agent.llm.errors import (
    FixtureNotFound,
    FixturesNotConsumed,
    InvalidScript,
    LlmError,
    ReplayError,
    ScriptExhausted,
    UnknownRoute,
)
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.routes import assign_routes
from acp_agent.llm.service import STREAM

log = logging.getLogger(__name__)

PRIMARY = "session.jsonl"
OVERRIDE = "replay.override.json"
PRESEEDED = "sessions"
"""A scenario's `sessions/<id>/session.jsonl`: logs stored before the run (a session it loads)."""


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


def load_scripts(directory: Path) -> dict[str, Script]:
    """Every route's script from a scenario directory, overrides applied."""
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
    return {**scripts, **overrides}


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

    def __init__(self, scripts: dict[str, Script], jitter: int | None = None) -> None:
        self.scripts = scripts
        self.used: dict[str, int] = dict.fromkeys(scripts, 0)
        self._jitter = jitter

    async def listener(self, request: LlmRequest, next: Callable[[], Awaitable[Any]]) -> AsyncIterator[StreamChunk]:
        try:
            entry = self._take(request.route)
        except ReplayError as exc:
            log.error("replay: %s: %s", type(exc).__name__, exc)
            raise
        return self._play(entry, request.route)

    def _take(self, route: str) -> ReplayEntry:
        script = self.scripts.get(route)
        if script is None:
            raise UnknownRoute(route, sorted(self.scripts))
        index = self.used[route]
        if index >= len(script):
            raise ScriptExhausted(route, index, len(script))
        self.used[route] = index + 1
        return script[index]

    async def _play(self, entry: ReplayEntry, route: str) -> AsyncIterator[StreamChunk]:
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

    @field_validator("jitter", mode="before")
    @classmethod
    def _unset_is_none(cls, value: object) -> object:
        # `${ACP_AGENT_REPLAY_JITTER:-}` expands to "" when the variable is not set.
        return None if value == "" else value


def apply(ctx: Context, config: Config) -> Disposer:
    return install(ctx, ReplayModel(load_scripts(Path(config.fixtures)), config.jitter))


def install(ctx: Context, model: ReplayModel) -> Disposer:
    """Make `model` own `llm/stream`, and report unconsumed calls at shutdown (of a process
    that asked for any)."""

    async def check() -> None:
        unconsumed = model.report()
        if unconsumed is not None:
            log.error("replay: %s: %s", type(unconsumed).__name__, unconsumed)

    return combine(ctx.events.on(STREAM, model.listener), ctx.events.on(SHUTDOWN, check))
