from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from acp_agent.kernel import Context, NoListener, Row, compose
from acp_agent.llm import replay
from acp_agent.llm.errors import (
    FixtureNotFound,
    FixturesNotConsumed,
    InvalidScript,
    LlmError,
    ReplayError,
    ScriptExhausted,
    UnknownRoute,
)
from acp_agent.llm.replay import (
    ChunksEntry,
    HangEntry,
    ReplayModel,
    ThrowEntry,
    derive_script,
    install,
    load_scripts,
    read_jsonl,
)
from acp_agent.llm.service import LLM, STREAM
from acp_agent.session.content import BlockStart, TextDelta

from .builders import (
    Log,
    Step,
    call_chunks,
    collect,
    dumped,
    play,
    request,
    spawn,
    text_chunks,
    unreachable,
    write_override,
)

LOGGER = "acp_agent.llm.replay"


def entry(text: str) -> ChunksEntry:
    return ChunksEntry.model_validate({"chunks": text_chunks(text)})


# --- deriving scripts from logs ------------------------------------------------------------------


def test_one_call_per_step_that_streamed_in_log_order(tmp_path: Path) -> None:
    log = Log("p").turn(
        "one", Step(call_chunks("c1", "bash", {"command": "ls"}), {"c1": "a b"}), Step(text_chunks("first"))
    )
    # A step whose request threw before streaming holds no chunk and contributes no call.
    log.turn("two", Step(), Step(text_chunks("second")))
    path = log.write(tmp_path)

    script = derive_script(read_jsonl(path), "session.jsonl")

    assert [dumped(e.chunks) for e in script if isinstance(e, ChunksEntry)] == [
        call_chunks("c1", "bash", {"command": "ls"}),
        text_chunks("first"),
        text_chunks("second"),
    ]


def test_a_forked_childs_seed_is_skipped(tmp_path: Path) -> None:
    seed = Log("p").turn("one", Step(text_chunks("seeded")))
    fork = Log("f", parentSession="p", seedLength=len(seed.lines) - 1)
    fork.lines += seed.lines[1:]
    fork.turns = 1
    fork.turn("two", Step(text_chunks("own")))

    script = derive_script(fork.lines, "fork")

    assert [dumped(e.chunks) for e in script if isinstance(e, ChunksEntry)] == [text_chunks("own")]


def test_consecutive_chunks_of_different_steps_are_different_calls() -> None:
    # Only a hand-edited log has no event between two steps' chunks; each is still its own call.
    log = Log("p").add("assistant/chunk", turn=1, step=1, chunk=text_chunks("a")[-1])
    log.add("assistant/chunk", turn=1, step=2, chunk=text_chunks("b")[-1])

    assert len(derive_script(log.lines, "session.jsonl")) == 2


def test_a_group_without_finish_is_an_invalid_script(tmp_path: Path) -> None:
    log = Log("p").turn("one", Step(text_chunks("fine")))
    log.turn("two", Step(text_chunks("cut short")[:-1]))
    log.write(tmp_path)

    with pytest.raises(InvalidScript) as caught:
        load_scripts(tmp_path)
    assert "session session.jsonl (s1) turn 2 step 1 has chunks but no finish chunk" in str(caught.value)
    assert caught.value.code == "REPLAY"


def test_a_missing_fixture_is_reported(tmp_path: Path) -> None:
    with pytest.raises(FixtureNotFound, match="replay fixture not found: .*nowhere/session.jsonl"):
        load_scripts(tmp_path / "nowhere")
    Log("child", parentSession="p").write(tmp_path, "session.1.jsonl")
    with pytest.raises(FixtureNotFound, match="session.jsonl"):
        load_scripts(tmp_path)


@pytest.mark.parametrize("content", ["", "\n", '{"jsonrpc": "2.0"}\n'])
def test_a_primary_file_that_is_not_a_session_log_is_a_missing_fixture(tmp_path: Path, content: str) -> None:
    (tmp_path / "session.jsonl").write_text(content)

    with pytest.raises(FixtureNotFound, match="not a session log"):
        load_scripts(tmp_path)


# --- overrides ---------------------------------------------------------------------------------


def test_a_list_override_replaces_the_primary_script(tmp_path: Path) -> None:
    # The recorded group has no finish: the override stands in for it, so it is never derived.
    Log("p").turn("one", Step(text_chunks("thrown")[:2])).write(tmp_path)
    write_override(
        tmp_path,
        [
            {"kind": "chunks", "chunks": text_chunks("first")},
            {"kind": "throw", "message": "rate limited", "code": "RATE_LIMIT", "status": 429},
            {"kind": "hang"},
        ],
    )

    scripts = load_scripts(tmp_path)

    assert list(scripts) == ["s1"]
    first, thrown, hang = scripts["s1"]
    assert isinstance(first, ChunksEntry) and dumped(first.chunks) == text_chunks("first")
    assert thrown == ThrowEntry(chunks=[], message="rate limited", code="RATE_LIMIT", status=429)
    assert isinstance(hang, HangEntry)


def test_an_object_override_replaces_the_scripts_of_its_routes(tmp_path: Path) -> None:
    Log("p", created_at=1).turn("go", spawn("call_a", "task"), Step(text_chunks("PARENT"))).write(tmp_path)
    Log("c", created_at=2, parentSession="p").turn("task", Step(text_chunks("CHILD"))).write(
        tmp_path, "session.1.jsonl"
    )
    write_override(
        tmp_path,
        {"s1/call_a": [{"kind": "throw", "message": "boom", "code": "SERVER"}], "s2": [{"kind": "hang"}]},
    )

    scripts = load_scripts(tmp_path)

    assert len(scripts["s1"]) == 2  # derived
    assert scripts["s1/call_a"] == [ThrowEntry(message="boom", code="SERVER")]
    assert scripts["s2"] == [HangEntry()]  # a route no recorded log has


def test_the_calls_a_pre_seeded_log_holds_were_made_before_the_run(tmp_path: Path) -> None:
    """A scenario that loads a stored session (`sessions/<id>/session.jsonl`): its log in the
    fixtures holds the earlier run's calls too, and the script starts after them."""
    earlier = Log("p", route="s1").turn("one", Step(text_chunks("FIRST")))
    earlier.write(tmp_path / "sessions" / "p")
    child = Log("c", created_at=1, parentSession="p", route="s1/call_a").turn("task", Step(text_chunks("KID")))
    child.write(tmp_path / "sessions" / "c")
    earlier.turn("two", Step(text_chunks("SECOND"))).turn("three", Step(text_chunks("THIRD"))).write(tmp_path)
    child.write(tmp_path, "session.1.jsonl")
    Log("n", created_at=2, route="s2").turn("new", Step(text_chunks("NEW"))).write(tmp_path, "session.2.jsonl")

    scripts = load_scripts(tmp_path)

    assert replay.calls_made_before(tmp_path) == {"p": 1, "c": 1}
    assert [dumped(e.chunks) for e in scripts["s1"] if isinstance(e, ChunksEntry)] == [
        text_chunks("SECOND"),
        text_chunks("THIRD"),
    ]
    assert scripts["s1/call_a"] == []  # every call of it was made before
    assert len(scripts["s2"]) == 1


# --- playing entries ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_chunks_are_replayed_in_order_one_call_after_another() -> None:
    model = ReplayModel({"s1": [entry("one"), entry("two")]})

    assert dumped(await play(model)) == text_chunks("one")
    assert dumped(await play(model)) == text_chunks("two")
    assert model.report() is None


@pytest.mark.anyio
async def test_a_recorded_directory_placeholder_streams_as_this_runs_path() -> None:
    places = {"{{cwd}}": "/run/cwd", "{{workdir}}": "/run", "{{config}}": ""}  # an empty path is left alone
    model = ReplayModel({"s1": [entry("read {{workdir}}/lib/a.py and {{cwd}}/b.py in {{config}}")]}, places=places)

    streamed = "".join(
        chunk["text"] for chunk in dumped(await play(model)) if "text" in chunk and chunk["type"] != "block-end"
    )
    assert streamed == "read /run/lib/a.py and /run/cwd/b.py in {{config}}"


@pytest.mark.anyio
async def test_each_route_has_its_own_cursor() -> None:
    model = ReplayModel({"s1": [entry("parent")], "s1/call_a": [entry("child")]})

    assert dumped(await play(model, "s1/call_a")) == text_chunks("child")
    assert dumped(await play(model, "s1")) == text_chunks("parent")


@pytest.mark.anyio
async def test_throw_streams_its_chunks_then_raises() -> None:
    chunks = text_chunks("partial answer")[:3]
    thrown = ThrowEntry.model_validate({"chunks": chunks, "message": "server said no", "code": "SERVER", "status": 503})
    model = ReplayModel({"s1": [thrown]})
    got = []

    with pytest.raises(LlmError) as caught:
        async for chunk in await model.listener(request(), next=unreachable):
            got.append(chunk)

    assert dumped(got) == chunks
    assert (caught.value.message, caught.value.code, caught.value.status) == ("server said no", "SERVER", 503)
    assert str(caught.value) == "server said no"
    assert not isinstance(caught.value, ReplayError)


@pytest.mark.anyio
async def test_hang_streams_partial_then_waits_until_cancelled() -> None:
    model = ReplayModel({"s1": [HangEntry()]})
    got = []

    with anyio.move_on_after(0.05) as scope:
        async for chunk in await model.listener(request(), next=unreachable):
            got.append(chunk)

    assert scope.cancelled_caught
    assert got == [BlockStart(index=0, block_type="text"), TextDelta(index=0, text="partial")]


@pytest.mark.anyio
async def test_a_hanging_call_is_cancelled_between_chunks() -> None:
    model = ReplayModel({"s1": [HangEntry()]})
    got = []

    with anyio.CancelScope() as scope:
        async for chunk in await model.listener(request(), next=unreachable):
            got.append(chunk)
            scope.cancel()

    assert scope.cancelled_caught
    assert got == [BlockStart(index=0, block_type="text")]


# --- misuse ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_unknown_route_is_refused_listing_the_known_ones(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger=LOGGER)
    model = ReplayModel({"s1": [], "s1/call_a": []})

    with pytest.raises(UnknownRoute) as caught:
        await model.listener(request("s2"), next=unreachable)

    assert str(caught.value) == "no replay script for route 's2'; known routes: s1, s1/call_a"
    assert caught.value.route == "s2"
    assert "replay: UnknownRoute: no replay script for route 's2'" in caplog.text
    with pytest.raises(UnknownRoute, match="known routes: none"):
        await ReplayModel({}).listener(request("s1"), next=unreachable)


@pytest.mark.anyio
async def test_an_exhausted_script_names_route_call_and_length(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger=LOGGER)
    model = ReplayModel({"s1/call_a": [entry("only")]})
    await play(model, "s1/call_a")

    with pytest.raises(ScriptExhausted) as caught:
        await model.listener(request("s1/call_a"), next=unreachable)

    assert str(caught.value) == "replay script for route 's1/call_a' is exhausted: call 2 asked, 1 recorded"
    assert caught.value.route == "s1/call_a"
    assert "replay: ScriptExhausted: " in caplog.text


@pytest.mark.anyio
async def test_report_names_every_route_with_calls_left() -> None:
    model = ReplayModel({"s1": [entry("a"), entry("b")], "s1/call_a": [entry("c")], "s2": []})
    await play(model)

    unconsumed = model.report()

    assert isinstance(unconsumed, FixturesNotConsumed)
    assert unconsumed.progress == {"s1": (1, 2), "s1/call_a": (0, 1)}
    assert str(unconsumed) == "replay fixtures not fully consumed: s1 1/2, s1/call_a 0/1"


@pytest.mark.anyio
async def test_a_process_replays_and_answers_for_its_own_routes_only(caplog: pytest.LogCaptureFixture) -> None:
    """An ACP child's process (route base `s1/call_a`) and its parent's replay one scenario's
    fixtures: each plays the routes of its own agents, and holds only those to be consumed."""
    scripts = {"s1": [entry("a")], "s1/call_a": [], "s1/call_a/s1": [entry("b")], "s1/call_a/s1/call_c": []}
    parent, child = ReplayModel(scripts), ReplayModel(scripts, route_base="s1/call_a")
    assert (sorted(parent.scripts), sorted(child.scripts)) == (
        ["s1", "s1/call_a"],
        ["s1/call_a/s1", "s1/call_a/s1/call_c"],
    )
    assert dumped(await play(parent)) == text_chunks("a")
    assert parent.report() is None  # the child process's route is not the parent's to consume
    assert dumped(await play(child, "s1/call_a/s1")) == text_chunks("b")
    with pytest.raises(UnknownRoute):
        await play(child)


def test_a_notice_from_an_agent_that_asks_no_model_holds_only_its_parent(tmp_path: Path) -> None:
    """An ACP child's stand-in ends its turns without a model call: its notice gates the parent's
    call that reads it, and no call of the stand-in."""
    parent = Log("p", route="s1").turn("go", spawn("call_a", "work"), Step(text_chunks("started")))
    notice = {"agentId": "a", "route": "s1/call_a", "kind": "settled", "turn": 1, "text": "done", "isError": False}
    parent.add("turn/start", turn=2, trigger={"kind": "message", "source": {"kind": "subagent"}})
    parent.add("step/start", turn=2, step=1).add("subagent/notice", **notice)
    for chunk in text_chunks("read it"):
        parent.add("assistant/chunk", turn=2, step=1, chunk=chunk)
    parent.add("step/end", turn=2, step=1).add("turn/end", turn=2, reason={"kind": "completed"})
    stand_in = Log("a", parentSession="p", route="s1/call_a", spawnCallId="call_a").turn("work")
    parent.write(tmp_path)
    stand_in.write(tmp_path, "session.1.jsonl")
    _, gates, _ = replay.load_fixtures(tmp_path)
    assert gates == {"s1": {2: replay.Gate(notices=1)}}


@pytest.mark.anyio
@pytest.mark.parametrize("calls", [1, 0])
async def test_unconsumed_fixtures_are_logged_at_shutdown_by_a_process_that_asked_for_any(
    calls: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    ctx = Context()
    install(ctx, ReplayModel({"s1": [entry("a"), entry("b")]}))

    async with ctx.running():
        for _ in range(calls):  # none: the process only listed or loaded sessions
            await collect(await ctx.events.waterfall(STREAM, request()))

    said = "replay: FixturesNotConsumed: replay fixtures not fully consumed: s1 1/2"
    assert [record.getMessage() for record in caplog.records] == ([said] if calls else [])


@pytest.mark.anyio
async def test_nothing_is_logged_at_shutdown_when_every_call_was_replayed(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    ctx = Context()
    dispose = install(ctx, ReplayModel({"s1": [entry("a")]}))

    async with ctx.running():
        assert dumped(await collect(await ctx.events.waterfall(STREAM, request()))) == text_chunks("a")

    assert caplog.records == []
    dispose()
    with pytest.raises(NoListener):
        await ctx.events.waterfall(STREAM, request())


# --- jitter ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_jitter_pauses_between_chunks_without_changing_them(monkeypatch: pytest.MonkeyPatch) -> None:
    real_sleep = anyio.sleep
    slept: list[float] = []

    async def recording_sleep(delay: float) -> None:
        slept.append(delay)
        await real_sleep(delay)

    monkeypatch.setattr(anyio, "sleep", recording_sleep)
    chunks = text_chunks("x")
    long = ChunksEntry.model_validate({"chunks": [chunks[0], *[chunks[1]] * 20, *chunks[2:]]})  # 25 chunks

    async def run(jitter: int | None, route: str = "s1") -> tuple[list[object], list[float]]:
        slept.clear()
        chunks = await play(ReplayModel({route: [long]}, jitter=jitter), route)
        return dumped(chunks), list(slept)

    plain, no_sleep = await run(None)
    jittered, pauses = await run(7)
    again, same_pauses = await run(7)
    _, other_route = await run(7, "s2")

    assert no_sleep == []
    assert jittered == plain == again
    assert len(pauses) == len(plain) == 25
    assert pauses == same_pauses  # deterministic per seed and route
    assert other_route != pauses
    assert all(0 <= pause <= 0.003 for pause in pauses)
    assert any(pause > 0 for pause in pauses) and any(pause == 0 for pause in pauses)


def test_an_unset_jitter_is_none() -> None:
    assert replay.Config.model_validate({"fixtures": "d", "jitter": ""}).jitter is None
    assert replay.Config.model_validate({"fixtures": "d", "jitter": "12"}).jitter == 12
    assert replay.Config.model_validate({"fixtures": "d"}).jitter is None


# --- the loader plugin -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_plugin_replays_a_scenario_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger=LOGGER)
    Log("p").turn("hi", Step(text_chunks("hello")), Step(text_chunks("again"))).write(tmp_path)
    monkeypatch.setenv("SCENARIO_DIR", str(tmp_path))
    monkeypatch.delenv("SCENARIO_JITTER", raising=False)
    rows = [
        Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path / "sessions")}),
        Row(id="llm", name="acp_agent.llm.service"),
        Row(
            id="replay",
            name="acp_agent.llm.replay",
            config={"fixtures": "${SCENARIO_DIR}", "jitter": "${SCENARIO_JITTER:-}"},
        ),
    ]

    ctx = compose(rows)
    async with ctx.running():
        assert dumped(await collect(await ctx.get(LLM).stream(request()))) == text_chunks("hello")

    assert "replay fixtures not fully consumed: s1 1/2" in caplog.text
    ctx.scope.dispose()
