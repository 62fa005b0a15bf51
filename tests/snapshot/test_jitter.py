"""Replay under jitter (seeded random pauses between replayed chunks, per route): every scenario
must normalize to its unjittered snapshot whatever the scheduling, the jitter must really move
concurrent children's frames, and fixtures whose routes are mixed up must fail loudly.

Runtime: a run costs about 0.6 s of CPU (mostly the server's Python start-up), and the whole
snapshot directory must stay under a minute on two cores, so every scenario is jittered but not
every one under every seed: seeds 1..5 where scheduling can reorder something (two children of
one step streaming at once, or a cancel landing mid-run), two seeds for the other scenarios with
children (one agent streams at a time: the wire order is fixed by causality), one for the rest;
the seeds rotate so each of 1..5 is used. A scenario with children runs in both modes (as a
client with child sessions too): in its second mode, three of its seeds where scheduling matters,
else one. All runs go in one batch, a few servers at a time, shared by the tests of this module.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from functools import partial
from pathlib import Path

import anyio
import pytest

from acp_agent.llm.replay import read_jsonl
from acp_agent.snapshot.frames import frame_route, session_routes, session_update
from acp_agent.snapshot.normalize import normalize_run
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.runner import run_scenario
from tests.paths import FIXTURES, ROOT
from tests.runs import side_by_side
from tests.snapshot.scenarios import RUNS, SCENARIOS, advertises_sessions, run_id

SEEDS = range(1, 6)
SERVERS_AT_ONCE = 4
SNAPSHOTS = ROOT / "snapshots" / "snapshot" / "test_scenarios"
CONCURRENT = "concurrent-children"
RACING = "cancel-two-children"
"""Its two children stream their model calls at the same time, and each shows a tool call."""

BACKGROUND_RACING = {"background-second-prompt", "background-message-busy"}
"""A background child works while its parent answers a prompt, then a notice: five seeds each in
their own mode, one in the other (the other background scenarios meet at the same kinds of gate:
one seed each)."""
CANCELS = {"cancel", "promptAndCancel", "promptAndCancelWhen", "promptWhileBusy"}
"""The ops whose cancel may land mid-run."""

Runs = dict[tuple[str, bool, int], RunResult]


def children_per_step(name: str) -> int:
    """The most children the scenario's fixtures show started by one step of one agent (0: none)."""
    logs = [read_jsonl(path) for path in (FIXTURES / name).glob("session*.jsonl")]
    calls = {
        (log[0]["id"], event["data"]["callId"]): (log[0]["id"], event["data"]["turn"], event["data"]["step"])
        for log in logs
        for event in log[1:]
        if event["type"] == "tool/call"
    }
    steps = Counter(calls.get((log[0].get("parentSession"), log[0].get("spawnCallId"))) for log in logs)
    return max((n for step, n in steps.items() if step is not None), default=0)


def seeds(name: str, child_sessions: bool | None = None) -> list[int]:
    """The seeds a scenario is jittered with in a mode (see the module's docstring; None: the
    mode its input.json says)."""
    steps = json.loads((FIXTURES / name / "input.json").read_text(encoding="utf-8"))["steps"]
    children = children_per_step(name)
    sensitive = children >= 2 or any(step["op"] in CANCELS for step in steps) or name in BACKGROUND_RACING
    count = len(SEEDS) if sensitive else 2 if children else 1
    if child_sessions is not None and child_sessions != advertises_sessions(name):
        count = 3 if sensitive and name not in BACKGROUND_RACING else 1
    first = SCENARIOS.index(name)
    return sorted({SEEDS[(first + k) % len(SEEDS)] for k in range(count)})


def snapshot_text(name: str, child_sessions: bool = False) -> str:
    """The unjittered snapshot of a scenario in a mode (test_scenarios.py holds that run against it)."""
    return (SNAPSHOTS / f"test_scenario[{run_id(name, child_sessions)}].txt").read_text(encoding="utf-8")


UNMEASURED = {"COVERAGE_PROCESS_START": "", "COVERAGE_PROCESS_CONFIG": ""}
"""Added to the jittered servers' environment so that coverage does not start in them (under
`.ci/run`, its start-up hook starts it in every Python process where one of these is set and not
empty). They run the code the snapshot tests measure, only scheduled otherwise; measured, they
took this module from about 55 s to 85 s there."""


@pytest.fixture(scope="module")
def jittered(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Every scenario under each of its seeds, run concurrently a few at a time."""
    runs = {
        (name, child_sessions, seed): partial(
            run_scenario, FIXTURES / name, tmp_path_factory.mktemp(f"{name}-jitter{seed}"),
            jitter=seed, child_sessions=child_sessions, env=UNMEASURED,
        )
        for name, child_sessions in RUNS
        for seed in seeds(name, child_sessions)
    }  # fmt: skip
    return side_by_side(runs, SERVERS_AT_ONCE)


@pytest.mark.parametrize(("name", "child_sessions"), RUNS, ids=[run_id(*run) for run in RUNS])
def test_jitter_does_not_change_the_snapshot(name: str, child_sessions: bool, jittered: Runs) -> None:
    expected = snapshot_text(name, child_sessions)
    for seed in seeds(name, child_sessions):
        result = jittered[name, child_sessions, seed]
        assert result.failures == [], f"seed {seed}"
        assert normalize_run(result).text() == expected, f"seed {seed}"


def raw_child_frames(result: RunResult) -> list[tuple[str | None, str, str | None]]:
    """The children's frames as they came on stdout: (route, kind, tool call id)."""
    frames = [json.loads(line) for line in result.stdout]
    routes = session_routes(result.logs)
    return [
        (frame_route(frame, routes), update["sessionUpdate"], update.get("toolCallId"))
        for frame in frames
        if (update := session_update(frame)) is not None and frame_route(frame, routes) is not None
    ]


def test_scheduling_sensitive_scenarios_get_every_seed() -> None:
    assert {name for name in SCENARIOS if len(seeds(name)) == len(SEEDS)} >= {
        "concurrent-children", "cancel-two-children", "delegation", "cancel",
    }  # fmt: skip
    assert children_per_step("concurrent-children") == 2 and children_per_step("grandchild") == 1
    assert [len(seeds(name)) for name in ("grandchild", "fork-recall", "handshake")] == [2, 2, 1]
    assert {seed for name in SCENARIOS for seed in seeds(name)} == set(SEEDS)


def test_the_jitter_really_reorders_concurrent_children(jittered: Runs) -> None:
    orders = {tuple(raw_child_frames(jittered[RACING, False, seed])) for seed in SEEDS}
    assert all(len(order) == 4 for order in orders)  # each child: its tool call and its update
    assert len(orders) >= 2  # the raw interleaving depends on the seed ...
    assert len({normalize_run(jittered[RACING, False, seed]).text() for seed in SEEDS}) == 1  # ... the snapshot not
    # As child sessions, too: each child's frames (announced, told its task, its own updates,
    # its end) interleave with the other's, and read one child after the other.
    sessions = [jittered[RACING, True, seed] for seed in seeds(RACING, True)]
    assert len({tuple(raw_child_frames(result)) for result in sessions}) >= 2
    assert {normalize_run(result).text() for result in sessions} == {snapshot_text(RACING, True)}


def copy_scenario(name: str, into: Path) -> Path:
    target = into / name
    shutil.copytree(FIXTURES / name, target)
    return target


def child_logs(scenario: Path) -> list[Path]:
    """The scenario's child logs (their header names a parent session)."""
    return [path for path in sorted(scenario.glob("session*.jsonl")) if "parentSession" in read_header(path)]


def read_header(path: Path) -> dict[str, object]:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def write_header(path: Path, header: dict[str, object]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("".join(line + "\n" for line in [json.dumps(header), *lines[1:]]), encoding="utf-8")


def test_swapped_children_scripts_fail_with_a_typed_replay_error(tmp_path: Path) -> None:
    scenario = copy_scenario(CONCURRENT, tmp_path)
    first, second = child_logs(scenario)
    a, b = read_header(first), read_header(second)
    for key in ("route", "spawnCallId"):
        a[key], b[key] = b[key], a[key]
    write_header(first, a)
    write_header(second, b)
    (tmp_path / "work").mkdir()
    result = anyio.run(lambda: run_scenario(scenario, tmp_path / "work"))
    # Each child read the other's answers: the replay model cannot tell, the harness does.
    assert sorted(f.split(" replayed ")[0] for f in result.failures) == [
        "replay: FixtureMismatch: route 's1/call_colour'",
        "replay: FixtureMismatch: route 's1/call_count'",
    ]
    assert normalize_run(result).text() != snapshot_text(CONCURRENT)


def test_older_fixtures_without_routes_replay_by_matching_prompts(tmp_path: Path) -> None:
    scenario = copy_scenario(CONCURRENT, tmp_path)
    # Renamed so that the file order no longer follows the route order, and stripped of what
    # older fixtures lack: the children are matched to the parent's calls by their prompts.
    for path, new_name in zip(child_logs(scenario), ["session.9.jsonl", "session.4.jsonl"], strict=True):
        header = read_header(path)
        del header["route"], header["spawnCallId"]
        write_header(path, header)
        path.rename(scenario / new_name)
    parent = scenario / "session.jsonl"
    header = read_header(parent)
    del header["route"]
    write_header(parent, header)
    assert [read_header(p).get("route") for p in sorted(scenario.glob("*.jsonl"))] == [None, None, None]
    (tmp_path / "work").mkdir()
    result = anyio.run(lambda: run_scenario(scenario, tmp_path / "work", jitter=3))
    assert result.failures == []
    assert normalize_run(result).text() == snapshot_text(CONCURRENT)
