"""The MCP scenarios (fixtures/mcp/<name>/): the replay model's recorded calls to `mcp__...`
tools run against the real fixture server (fixtures/mcp/server.py, written with the SDK's FastMCP)
over stdio, streamable HTTP and SSE. Each scenario runs once (they start MCP servers, which is
slow: all at once, a few at a time), and every test of this module reads those runs: the
snapshots, the facts a reader checks, and every frame held against the protocol.

They live under fixtures/mcp/ rather than among the other scenarios so that the jitter and
conformance sweeps over fixtures/* do not start their servers again; the conformance of their
frames is checked here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from acp_agent.mcp import texts
from acp_agent.mcp.events import STATUS_EVENT, TOOLS_EVENT
from acp_agent.permissions import texts as permission_texts
from acp_agent.snapshot.normalize import normalize_run
from acp_agent.snapshot.result import RunResult
from tests.e2e.test_conformance import Checked, Schema, frames_of, modelled_part, official_model, round_trip
from tests.paths import ACP_SCHEMA, FIXTURES
from tests.runs import ScenarioRuns

MCP_FIXTURES = FIXTURES / "mcp"
SCENARIOS = sorted(path.name for path in MCP_FIXTURES.iterdir() if (path / "input.json").is_file())
AT_ONCE = 4

Runs = dict[str, RunResult]


@pytest.fixture(scope="module")
def runs(scenario_run: ScenarioRuns) -> Runs:
    scenario_run.prefetch([(MCP_FIXTURES / name, None) for name in SCENARIOS], AT_ONCE)
    return {name: scenario_run(MCP_FIXTURES / name) for name in SCENARIOS}


def frames(result: RunResult) -> list[Any]:
    return [json.loads(line) for line in result.stdout]


def updates(result: RunResult) -> list[dict[str, Any]]:
    return [f["params"]["update"] for f in frames(result) if f.get("method") == "session/update"]


def events(result: RunResult, kind: str, route: str = "s1") -> list[dict[str, Any]]:
    return [e["data"] for e in result.logs[route][1:] if e["type"] == kind]


def results_by_call(result: RunResult, route: str = "s1") -> dict[str, dict[str, Any]]:
    return {data["callId"]: data for data in events(result, "tool/result", route)}


def test_the_scenarios_exist() -> None:
    assert set(SCENARIOS) == {
        "approvals", "cancel", "cannot-start", "child", "command", "dies", "load", "remote", "tools",
    }  # fmt: skip


@pytest.mark.parametrize("name", SCENARIOS)
def test_mcp_scenario(name: str, runs: Runs, snapshot_file: SnapshotAssertion) -> None:
    result = runs[name]
    assert result.failures == []
    assert normalize_run(result).text() == snapshot_file


def test_results_reach_the_model_as_text_and_the_card_in_full(runs: Runs) -> None:
    result = runs["tools"]
    by_call = results_by_call(result)
    assert by_call["call_echo"]["content"] == [{"type": "text", "text": "echo: hello"}]
    assert by_call["call_fail"]["isError"] is True  # the server's isError: a failed card with its text
    assert by_call["call_fail"]["content"][0]["text"] == "Error executing tool fail: failed on purpose: testing"
    assert by_call["call_pixel"]["content"] == [{"type": "text", "text": texts.image_note("image/png", 70)}]
    assert texts.image_note("image/png", 70) == "[image: image/png, 70 bytes, shown to the user]"
    final = [u for u in updates(result) if u.get("status") in ("completed", "failed")]
    pixel = next(u for u in final if u["toolCallId"] == "call_pixel")
    assert pixel["content"][1]["content"]["type"] == "image"  # the image itself, on the card
    assert pixel["rawOutput"]["content"][0]["data"] == "<70 bytes>"
    started = {u["toolCallId"]: u for u in updates(result) if u["sessionUpdate"] == "tool_call"}
    assert [(u["title"], u["kind"], u["name"]) for u in started.values()] == [
        ("Echo a message", "read", "mcp__fixture__echo"),  # the annotation's title; read-only
        ("fixture: fail", "delete", "mcp__fixture__fail"),  # destructive
        ("fixture: pixel", "fetch", "mcp__fixture__pixel"),  # read-only, open world
    ]
    assert started["call_echo"]["_meta"] == {"acpAgent": {"mcpServer": "fixture", "mcpTool": "echo"}}


def test_the_log_says_which_mcp_tools_each_model_call_saw(runs: Runs) -> None:
    result = runs["tools"]
    log = result.logs["s1"][1:]
    (status,) = events(result, STATUS_EVENT)
    assert status["state"] == "ready" and status["tools"][:3] == ["echo", "fail", "pixel"]
    (seen,) = events(result, TOOLS_EVENT)  # logged once: the second call saw the same set
    echo = seen["tools"][0]
    assert (echo["name"], echo["description"]) == ("mcp__fixture__echo", "Answer the message back.")
    assert echo["inputSchema"]["required"] == ["message"]
    first_step = next(i for i, e in enumerate(log) if e["type"] == "step/start")
    assert log[first_step + 1]["type"] == TOOLS_EVENT  # before the first model call's chunks
    assert all(e.get("ignorable") for e in log if e["type"].startswith("mcp/"))


def test_cancel_stops_the_mcp_request_and_fails_the_card(runs: Runs) -> None:
    result = runs["cancel"]
    assert results_by_call(result)["call_slow"]["error"]["code"] == "cancelled"
    # The server heard `notifications/cancelled`: its tool's task was cancelled (its stderr is ours).
    assert "[mcp fixture] slow: cancelled by the client" in result.stderr
    assert [e["reason"]["kind"] for e in events(result, "turn/end")] == ["aborted", "completed"]


def test_a_server_that_cannot_start_is_said_in_the_next_answer_and_offers_nothing(runs: Runs) -> None:
    result = runs["cannot-start"]
    failed = events(result, STATUS_EVENT)
    assert [(s["server"], s["state"]) for s in failed] == [("broken", "failed"), ("missing", "failed")]
    broken = texts.exited(3) + texts.stderr_tail(["fixture: cannot start, no database configured"])
    assert failed[0]["error"] == broken
    said = [u["content"]["text"] for u in updates(result) if u["sessionUpdate"] == "agent_message_chunk"]
    assert said[0] == (
        f"{texts.could_not_start('broken')}: {broken}\n\n{texts.could_not_start('missing')}: {failed[1]['error']}\n\n"
    )
    chunks = [e["chunk"] for e in events(result, "assistant/chunk")]
    assert not any("could not start" in json.dumps(chunk) for chunk in chunks)  # never the model's
    assert events(result, TOOLS_EVENT) == []  # no MCP tool was ever offered


def test_a_server_needing_authentication_is_a_notice(runs: Runs) -> None:
    result = runs["remote"]
    notices = [u for u in updates(result) if u["sessionUpdate"] == "notice"]
    assert notices == [
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "MCP server private could not start",
            "description": texts.NEEDS_AUTH,
        }
    ]
    assert not any(
        u["sessionUpdate"] == "agent_message_chunk" and "could not" in u["content"]["text"] for u in updates(result)
    )


def test_http_and_sse_servers_answer_their_calls(runs: Runs) -> None:
    result = runs["remote"]
    by_call = results_by_call(result)
    assert by_call["call_http"]["content"][0]["text"] == "echo: over streamable HTTP"
    assert by_call["call_sse"]["content"][0]["text"] == "echo: over SSE"
    assert [(s["server"], s["transport"], s["state"]) for s in events(result, STATUS_EVENT)] == [
        ("web", "http", "ready"),
        ("events", "sse", "ready"),
        ("private", "http", "failed"),
    ]


def test_a_child_uses_its_sessions_connection(runs: Runs) -> None:
    result = runs["child"]
    child = "s1/call_helper"
    assert results_by_call(result, child)["call_child_echo"]["content"][0]["text"] == "echo: from the child"
    assert events(result, STATUS_EVENT, child) == []  # no connection of its own: the parent's
    (seen,) = events(result, TOOLS_EVENT, child)
    assert "mcp__fixture__echo" in [tool["name"] for tool in seen["tools"]]


def test_a_loaded_session_replays_its_mcp_cards_as_they_showed(runs: Runs) -> None:
    result = runs["load"]
    all_frames = frames(result)
    answered = next(i for i, f in enumerate(all_frames) if "modes" in (f.get("result") or {}))
    replayed = [f["params"]["update"] for f in all_frames[:answered] if f.get("method") == "session/update"]
    echo = next(u for u in replayed if u.get("toolCallId") == "call_echo" and u["sessionUpdate"] == "tool_call")
    assert (echo["title"], echo["kind"], echo["name"]) == ("Echo a message", "read", "mcp__fixture__echo")
    assert not any(u["sessionUpdate"] == "notice" for u in replayed)
    assert results_by_call(result)["call_more"]["content"][0]["text"] == "echo: once more"


def test_allowing_a_whole_server_once_covers_its_other_tools(runs: Runs) -> None:
    result = runs["approvals"]
    asked = [f["params"] for f in frames(result) if f.get("method") == "session/request_permission"]
    assert len(asked) == 1  # the second echo and the pixel did not ask
    assert [(o["optionId"], o["kind"], o["name"]) for o in asked[0]["options"]] == [
        ("allow_once", "allow_once", "Allow once"),
        ("allow_always", "allow_always", "Always allow mcp__fixture__echo"),
        ("allow_server_always", "allow_always", permission_texts.server_option_name("fixture")),
        ("reject_once", "reject_once", "Reject once"),
        ("reject_always", "reject_always", "Always reject mcp__fixture__echo"),
    ]
    assert events(result, "permission/grant") == [
        {"tool": "mcp__fixture__echo", "decision": "allow", "callId": "call_first", "server": "fixture"}
    ]
    assert all(not r["isError"] for r in results_by_call(result).values())


def test_new_tools_apply_from_the_next_model_call(runs: Runs) -> None:
    result = runs["dies"]
    assert results_by_call(result)["call_extra"]["content"][0]["text"] == "extra is here"
    first, grown, *_ = events(result, STATUS_EVENT)
    assert grown["tools"] == [*first["tools"], "extra"]  # the new set, logged
    seen = [[tool["tool"] for tool in data["tools"]] for data in events(result, TOOLS_EVENT)]
    assert seen[1] == seen[0] + ["extra"]


def test_a_server_that_dies_answers_not_connected_then_reconnects(runs: Runs) -> None:
    result = runs["dies"]
    by_call = results_by_call(result)
    assert by_call["call_crash"]["content"][0]["text"] == "Error: " + texts.not_connected("fixture", texts.exited(1))
    assert by_call["call_again"]["content"][0]["text"] == "echo: back again"
    assert [s["state"] for s in events(result, STATUS_EVENT)] == ["ready", "ready", "disconnected", "ready"]


def test_the_mcp_command_lists_the_servers_without_the_model(runs: Runs) -> None:
    result = runs["command"]
    (commands,) = [u for u in updates(result) if u["sessionUpdate"] == "available_commands_update"]
    assert {"name": "mcp", "description": texts.COMMAND_DESCRIPTION} in commands["availableCommands"]
    said = [u["content"]["text"] for u in updates(result) if u["sessionUpdate"] == "agent_message_chunk"]
    broken = texts.exited(3) + texts.stderr_tail(["fixture: cannot start, no database configured"])
    assert said == [
        "MCP servers of this session:\n"
        "- fixture (stdio): ready, 8 tools\n"
        f"- broken (stdio): failed, 0 tools; last error: {broken}"
    ]
    assert events(result, "assistant/chunk") == []  # no model call
    assert texts.status_line("one", "http", "ready", 1, None) == "- one (http): ready, 1 tool"


# -- conformance ----------------------------------------------------------------------------------


def needs_schema(item: Checked) -> bool:
    """Frames the official package has no model for: `notice` updates, tool calls naming the tool
    (`ToolCall.name`) and the `session.notices` capability; they are held against the JSON Schema
    alone."""
    body = item.body if isinstance(item.body, dict) else {}
    if item.method == "initialize" and item.kind == "params":  # the client's `session.notices`
        return "session" in body.get("clientCapabilities", {})
    update = body.get("update") if item.method == "session/update" else body.get("toolCall")
    return isinstance(update, dict) and (update.get("sessionUpdate") == "notice" or "name" in update)


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_frame_conforms(name: str, runs: Runs) -> None:
    checked = list(frames_of(runs[name]))
    schema_only = [item for item in checked if needs_schema(item)]
    for item in checked:
        if item not in schema_only:
            assert round_trip(official_model(item), item.body) == modelled_part(item), item.where
    if not schema_only:
        return
    schema = Schema(ACP_SCHEMA)
    for item in checked:
        definition = schema.definition_for(item)
        assert schema.errors(definition, item.body) == [], f"{definition}: {item.where}"


def test_the_scenarios_produce_the_frames_only_the_schema_checks(runs: Runs) -> None:
    produced = {name: [item for item in frames_of(runs[name]) if needs_schema(item)] for name in SCENARIOS}
    assert produced["remote"] and produced["tools"] and produced["approvals"]
