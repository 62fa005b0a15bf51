"""The replay model over the recorded upstream scenarios (read in place; skipped when absent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.llm.assembler import BlockAssembler
from acp_agent.llm.errors import LlmError
from acp_agent.llm.replay import ChunksEntry, ReplayModel, ThrowEntry, derive_script, load_scripts, read_jsonl
from tests.paths import UPSTREAM

from .builders import play

pytestmark = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="shared upstream scenarios absent")

LOGS = sorted(UPSTREAM.glob("*/session*.jsonl")) if UPSTREAM.is_dir() else []
SPAWN_CALL = "call_00_3R6FQL0Zk3D122Jpbu0Q9888"
FORK_CALL = "call_00_gnZDhmbVLP9hQ0PT42QW7314"


def own_events(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A log's events after its seed (a fork's seed is its parent's history)."""
    return lines[1 + (lines[0].get("seedLength") or 0) :]


def groups_with_chunks(lines: list[dict[str, Any]]) -> list[tuple[int, int]]:
    keys = [(e["data"]["turn"], e["data"]["step"]) for e in own_events(lines) if e["type"] == "assistant/chunk"]
    return sorted(set(keys))


@pytest.mark.parametrize("path", LOGS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_one_call_per_step_holding_chunks_and_each_spells_the_logged_message(path: Path) -> None:
    lines = read_jsonl(path)

    script = derive_script(lines, path.name)

    groups = groups_with_chunks(lines)
    assert len(script) == len(groups)
    messages = {
        (e["data"]["turn"], e["data"]["step"]): e["data"] for e in own_events(lines) if e["type"] == "assistant/message"
    }
    for key, entry in zip(groups, script, strict=True):
        assert isinstance(entry, ChunksEntry)
        assembler = BlockAssembler()
        for chunk in entry.chunks:
            assembler.feed(chunk)
        assert [block.dump() for block in assembler.blocks()] == messages[key]["content"]
        assert assembler.usage is not None and assembler.usage.dump() == messages[key]["usage"]
        assert assembler.finish is not None


@pytest.mark.parametrize(
    ("scenario", "lengths"),
    [
        ("handshake", {"s1": 0}),
        ("text-turn", {"s1": 1}),
        ("tool-call-turn", {"s1": 2}),
        ("error-finish", {"s1": 1}),
        ("subagent-spawn", {"s1": 2, f"s1/{SPAWN_CALL}": 1}),
        ("subagent-fork", {"s1": 3, f"s1/{FORK_CALL}": 1}),
    ],
)
@pytest.mark.anyio
async def test_every_scenario_routes_and_replays_completely(scenario: str, lengths: dict[str, int]) -> None:
    scripts = load_scripts(UPSTREAM / scenario)
    assert {route: len(script) for route, script in scripts.items()} == lengths

    model = ReplayModel(scripts)
    for route, length in lengths.items():
        for _ in range(length):
            try:
                chunks = await play(model, route)
            except LlmError:
                continue
            assert chunks[-1].type == "finish"
    assert model.report() is None


def test_the_subagent_children_are_routed_under_their_spawn_calls() -> None:
    for scenario, call_id in (("subagent-spawn", SPAWN_CALL), ("subagent-fork", FORK_CALL)):
        child = read_jsonl(UPSTREAM / scenario / "session.1.jsonl")
        assert "route" not in child[0] and "spawnCallId" not in child[0]  # matched by prompt

        scripts = load_scripts(UPSTREAM / scenario)

        assert scripts[f"s1/{call_id}"] == derive_script(child, "session.1.jsonl")


@pytest.mark.anyio
async def test_the_fork_child_replays_only_its_own_turn() -> None:
    lines = read_jsonl(UPSTREAM / "subagent-fork" / "session.1.jsonl")
    assert lines[0]["seedLength"] == 38
    # Its seed holds the parent's turn-1 call, which the child must not replay.
    assert {(e["data"]["turn"], e["data"]["step"]) for e in lines[1:] if e["type"] == "assistant/chunk"} == {
        (1, 1),
        (2, 1),
    }

    model = ReplayModel(load_scripts(UPSTREAM / "subagent-fork"))
    chunks = await play(model, f"s1/{FORK_CALL}")

    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    assert assembler.blocks()[-1].dump() == {"type": "text", "text": "MARMALADE"}
    assert model.used[f"s1/{FORK_CALL}"] == len(model.scripts[f"s1/{FORK_CALL}"]) == 1


@pytest.mark.anyio
async def test_error_finish_the_override_replaces_the_recorded_script() -> None:
    directory = UPSTREAM / "error-finish"
    # The log holds the step, but no chunk: the request threw before streaming.
    assert derive_script(read_jsonl(directory / "session.jsonl"), "session.jsonl") == []

    scripts = load_scripts(directory)

    assert scripts == {
        "s1": [ThrowEntry(chunks=[], message="simulated provider error (HTTP 401)", code="AUTH", status=401)]
    }
    with pytest.raises(LlmError) as caught:
        await play(ReplayModel(scripts))
    assert (caught.value.message, caught.value.code, caught.value.status) == (
        "simulated provider error (HTTP 401)",
        "AUTH",
        401,
    )
