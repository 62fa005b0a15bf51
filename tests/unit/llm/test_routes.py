"""Route assignment, observed through `load_scripts`: which recorded log answers which route."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.llm.errors import ReplayError
from acp_agent.llm.replay import ChunksEntry, Script, load_scripts
from acp_agent.llm.routes import assign_routes

from .builders import Log, Step, spawn, text_chunks

PARENT = "parent-id"


def answers(scripts: dict[str, Script]) -> dict[str, list[str]]:
    """Each route's recorded answers: the text of each call's text blocks."""
    return {
        route: [
            "".join(c.block.text for c in entry.chunks if c.type == "block-end" and c.block.type == "text")
            for entry in script
            if isinstance(entry, ChunksEntry)
        ]
        for route, script in scripts.items()
    }


def child(answer: str, prompt: str, *, created_at: int, parent: str = PARENT, **header: object) -> Log:
    return Log(f"id-{answer}", created_at=created_at, parentSession=parent, **header).turn(
        prompt, Step(text_chunks(answer))
    )


def parent(*steps: Step, session_id: str = PARENT, created_at: int = 1) -> Log:
    return Log(session_id, created_at=created_at).turn("go", *steps, Step(text_chunks("PARENT")))


def test_primary_is_s1_and_other_top_level_logs_follow_by_creation_time(tmp_path: Path) -> None:
    Log("p", created_at=50).turn("hi", Step(text_chunks("primary"))).write(tmp_path)
    Log("b", created_at=10).turn("hi", Step(text_chunks("older"))).write(tmp_path, "z.jsonl")
    Log("a", created_at=20).turn("hi", Step(text_chunks("newer"))).write(tmp_path, "a.jsonl")
    # Not logs: a transcript beside them and an empty file.
    (tmp_path / "stdout.golden.jsonl").write_text('{"jsonrpc": "2.0", "id": 0}\n')
    (tmp_path / "empty.jsonl").write_text("\n")

    assert answers(load_scripts(tmp_path)) == {"s1": ["primary"], "s2": ["older"], "s3": ["newer"]}


def test_routes_written_in_headers_are_kept(tmp_path: Path) -> None:
    Log("p", route="s5").turn("hi", Step(text_chunks("primary"))).write(tmp_path)
    Log("x", created_at=30, route="s1").turn("hi", Step(text_chunks("x"))).write(tmp_path, "x.jsonl")
    Log("y", created_at=10).turn("hi", Step(text_chunks("y"))).write(tmp_path, "y.jsonl")
    child("kid", "anything", created_at=40, parent="p", route="s5/custom").write(tmp_path, "kid.jsonl")

    assert answers(load_scripts(tmp_path)) == {"s5": ["primary"], "s1": ["x"], "s2": ["y"], "s5/custom": ["kid"]}


def test_a_child_is_routed_by_its_spawn_call_id(tmp_path: Path) -> None:
    parent(spawn("call_a", "task A"), spawn("call_b", "task B")).write(tmp_path)
    # The prompt matches neither call: the recorded call id decides.
    child("B", "something else", created_at=5, spawnCallId="call_b").write(tmp_path, "session.1.jsonl")

    assert answers(load_scripts(tmp_path))["s1/call_b"] == ["B"]


def test_a_child_is_routed_by_matching_its_prompt_to_the_parents_calls(tmp_path: Path) -> None:
    parent(spawn("call_a", "task A"), spawn("call_b", "task B")).write(tmp_path)
    child("B", "task B", created_at=5).write(tmp_path, "session.1.jsonl")
    child("A", "task A", created_at=6).write(tmp_path, "session.2.jsonl")

    assert answers(load_scripts(tmp_path)) == {"s1": ["", "", "PARENT"], "s1/call_a": ["A"], "s1/call_b": ["B"]}


def test_a_forked_childs_prompt_is_read_after_its_seed(tmp_path: Path) -> None:
    log = parent(spawn("call_go", "go"), spawn("call_f", "the real task"))
    log.write(tmp_path)
    # A fork's seed is its parent's history, whose first user message ("go") matches another call.
    fork = Log("fork", created_at=9, parentSession=PARENT, seedLength=len(log.lines) - 1)
    fork.lines += log.lines[1:]
    fork.turns = log.turns
    fork.turn("the real task", Step(text_chunks("FORKED"))).write(tmp_path, "session.1.jsonl")

    assert answers(load_scripts(tmp_path))["s1/call_f"] == ["FORKED"]


def test_a_reused_call_id_gets_a_numbered_suffix(tmp_path: Path) -> None:
    log = Log(PARENT, created_at=1).turn("one", spawn("call_0", "first"), Step(text_chunks("P1")))
    log.turn("two", spawn("call_0", "second"), Step(text_chunks("P2"))).write(tmp_path)
    child("SECOND", "second", created_at=7).write(tmp_path, "session.1.jsonl")
    child("FIRST", "first", created_at=8).write(tmp_path, "session.2.jsonl")

    routed = answers(load_scripts(tmp_path))
    assert routed["s1/call_0"] == ["FIRST"]
    assert routed["s1/call_0#2"] == ["SECOND"]


def test_with_a_reused_spawn_call_id_the_prompt_picks_the_occurrence(tmp_path: Path) -> None:
    log = Log(PARENT, created_at=1).turn("one", spawn("call_0", "first"), Step(text_chunks("P1")))
    log.turn("two", spawn("call_0", "second"), Step(text_chunks("P2"))).write(tmp_path)
    # The older child answers the second call: age alone would route it to the first.
    child("SECOND", "second", created_at=7, spawnCallId="call_0").write(tmp_path, "session.1.jsonl")
    child("FIRST", "first", created_at=8, spawnCallId="call_0").write(tmp_path, "session.2.jsonl")

    routed = answers(load_scripts(tmp_path))
    assert routed["s1/call_0"] == ["FIRST"]
    assert routed["s1/call_0#2"] == ["SECOND"]


def test_children_no_call_spawned_are_numbered(tmp_path: Path) -> None:
    log = parent(spawn("call_a", "task A"))
    # Calls whose arguments hold no usable prompt never match, not even a child without a prompt.
    log.add("tool/call", turn=1, step=9, callId="call_x", name="bash", arguments="not json")
    log.add("tool/call", turn=1, step=9, callId="call_y", name="bash", arguments="[1, 2]")
    log.add("tool/call", turn=1, step=9, callId="call_z", name="subagent", arguments='{"prompt": 3}')
    log.write(tmp_path)
    child("ONE", "unrelated", created_at=5).write(tmp_path, "session.1.jsonl")
    Log("id-silent", created_at=6, parentSession=PARENT).write(tmp_path, "session.2.jsonl")
    child("THREE", "task A", created_at=7, spawnCallId="call_missing").write(tmp_path, "session.3.jsonl")

    routed = answers(load_scripts(tmp_path))
    assert routed["s1/#1"] == ["ONE"]
    assert routed["s1/#2"] == []
    assert routed["s1/#3"] == ["THREE"]
    assert "s1/call_a" not in routed


def test_children_recorded_in_reverse_spawn_order_are_routed_by_creation_time(tmp_path: Path) -> None:
    parent(spawn("call_a", "same task"), spawn("call_b", "same task")).write(tmp_path)
    # The file numbering is the reverse of the spawn order; createdAt breaks the prompt tie.
    child("SECOND", "same task", created_at=200).write(tmp_path, "session.1.jsonl")
    child("FIRST", "same task", created_at=100).write(tmp_path, "session.2.jsonl")

    routed = answers(load_scripts(tmp_path))
    assert routed["s1/call_a"] == ["FIRST"]
    assert routed["s1/call_b"] == ["SECOND"]


def test_a_grandchild_is_routed_under_its_parents_route(tmp_path: Path) -> None:
    parent(spawn("call_a", "task A")).write(tmp_path)
    # Older than its own parent, so it waits a round for the parent's route.
    Log("grand", created_at=3, parentSession="id-A").turn("task G", Step(text_chunks("G"))).write(
        tmp_path, "session.2.jsonl"
    )
    Log("id-A", created_at=5, parentSession=PARENT).turn(
        "task A", spawn("call_g", "task G"), Step(text_chunks("A"))
    ).write(tmp_path, "session.1.jsonl")

    routed = answers(load_scripts(tmp_path))
    assert routed["s1/call_a"] == ["", "A"]
    assert routed["s1/call_a/call_g"] == ["G"]


def test_an_orphan_child_is_refused(tmp_path: Path) -> None:
    parent(spawn("call_a", "task A")).write(tmp_path)
    child("LOST", "task A", created_at=5, parent="nobody").write(tmp_path, "session.1.jsonl")

    with pytest.raises(ReplayError, match="session.1.jsonl: its parent session nobody is not routed") as caught:
        load_scripts(tmp_path)
    assert caught.value.code == "REPLAY"


def test_two_logs_claiming_one_route_is_an_error() -> None:
    logs = {
        "session.jsonl": [{"type": "session", "version": 0, "id": "a", "createdAt": 0}],
        "session.1.jsonl": [{"type": "session", "version": 0, "id": "b", "createdAt": 1, "route": "s1"}],
    }
    with pytest.raises(ReplayError, match="both replay route 's1'"):
        assign_routes(logs, "session.jsonl")
