"""The runner and its client against a fake server that misbehaves on request (fake_server.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.snapshot.client import Client
from acp_agent.snapshot.errors import InvalidScenario, ServerGone
from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.runner import read_logs, route_key, run_scenario
from acp_agent.snapshot.scenario import ClientCapabilities
from tests.snapshot.conftest import fake_server, write_scenario

pytestmark = pytest.mark.anyio

OPEN = [{"op": "initialize"}, {"op": "newSession"}]


async def run_fake(
    tmp_path: Path, steps: list[dict[str, Any]], at_eof: str = "exit", timeout: float = 10.0, **extra: Any
) -> RunResult:
    """Run `steps` against the fake server. The step timeout is long (a loaded machine starts the
    fake slowly) except in the tests that wait for it to pass."""
    scenario = write_scenario(tmp_path / "scenario", steps, **extra)
    (tmp_path / "work").mkdir()
    return await run_scenario(scenario, tmp_path / "work", server=fake_server(at_eof), timeout=timeout)


async def test_a_clean_run_has_no_failures(tmp_path: Path) -> None:
    steps = [*OPEN, {"op": "prompt", "text": "quick"}, {"op": "cancel"}, {"op": "promptAndCancel", "text": "stream"}]
    result = await run_fake(tmp_path, steps)
    assert result.failures == []
    assert result.exit_code == 0
    assert result.cwd == (tmp_path / "work" / "cwd").resolve() and result.cwd.is_dir()
    assert [json.loads(line).get("method") for line in result.sent] == [
        "initialize", "session/new", "session/prompt", "session/cancel", "session/prompt", "session/cancel",
    ]  # fmt: skip
    assert json.loads(result.sent[0])["params"]["clientCapabilities"]["terminal"] is False


async def test_permission_requests_are_answered_from_the_queue_and_others_refused(tmp_path: Path) -> None:
    result = await run_fake(tmp_path, [*OPEN, {"op": "prompt", "text": "ask"}], permissions=["reject_once"])
    assert result.failures == []
    chunk = json.loads(result.stdout[-2])["params"]["update"]["content"]["text"]
    permission, other = json.loads(chunk)
    assert permission["result"] == {"outcome": {"outcome": "selected", "optionId": "no"}}
    assert other["error"]["code"] == -32601


async def test_a_permission_request_without_a_matching_answer_is_cancelled_and_reported(tmp_path: Path) -> None:
    result = await run_fake(tmp_path, [*OPEN, {"op": "prompt", "text": "ask"}, {"op": "prompt", "text": "ask"}],
                            permissions=["allow_always"])  # fmt: skip
    chunks = [json.loads(line) for line in result.stdout if "agent_message_chunk" in line]
    answers = [json.loads(c["params"]["update"]["content"]["text"])[0]["result"] for c in chunks]
    assert answers == [{"outcome": {"outcome": "cancelled"}}] * 2
    assert result.failures == [
        "the agent's permission request (tool call call_1) offers no option of kind 'allow_always'",
        "the agent asked for permission (tool call call_1) and input.json has no answer left",
    ]


async def test_unused_permission_answers_fail_the_run(tmp_path: Path) -> None:
    result = await run_fake(tmp_path, OPEN, permissions=["allow_once"])
    assert result.failures == ["permission answers left unused: ['allow_once']"]


async def test_wrong_answers_are_failures_and_the_run_goes_on(tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [
        {"op": "prompt", "text": "quick"},
        *OPEN,
        {"op": "newSessionExpectError", "cwd": "relative", "additionalDirectories": ["/x"]},
        {"op": "prompt", "text": "fail"},
        {"op": "promptExpectError", "text": "quick"},
        {"op": "promptExpectError", "text": "fail"},
        {"op": "promptAndCancel", "text": "quick"},
        {"op": "promptAndCancel", "text": "stream-ignoring-cancel"},
    ]
    result = await run_fake(tmp_path, steps)
    assert result.failures == [
        "step 1 (prompt): no session yet: a newSession step must come first",
        ('step 4 (newSessionExpectError): expected an error, got the result '
         '{"sessionId":"11111111-2222-3333-4444-555555555555"}'),
        "step 5 (prompt): unexpected error -32603: Internal error: boom",
        'step 6 (promptExpectError): expected an error, got the result {"stopReason":"end_turn"}',
        ('step 8 (promptAndCancel): answered before any agent_message_chunk: '
         '{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}'),
        ('step 9 (promptAndCancel): expected the result {"stopReason":"cancelled"}, '
         'got {"jsonrpc":"2.0","id":8,"result":{"stopReason":"end_turn"}}'),
    ]  # fmt: skip
    sent = json.loads(result.sent[2])["params"]
    assert sent == {"cwd": "relative", "mcpServers": [], "additionalDirectories": ["/x"]}


async def test_prompt_and_cancel_when_waits_for_the_children_then_cancels(tmp_path: Path) -> None:
    steps = [*OPEN, {"op": "promptAndCancelWhen", "text": "children", "children": 2}]
    result = await run_fake(tmp_path, steps)
    assert result.failures == []
    assert json.loads(result.sent[-1]) == {
        "jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "11111111-2222-3333-4444-555555555555"}
    }  # fmt: skip
    # Not before the second distinct child's tool call on this session (the fake answers
    # `end_turn` to a cancel that came earlier).
    assert json.loads(result.stdout[-1])["result"] == {"stopReason": "cancelled"}


async def test_prompt_and_cancel_when_reports_a_prompt_that_answered_first(tmp_path: Path) -> None:
    steps = [*OPEN, {"op": "promptAndCancelWhen", "text": "quick", "children": 1}]
    result = await run_fake(tmp_path, steps)
    assert result.failures == [
        "step 3 (promptAndCancelWhen): answered before 1 child agent(s) showed a tool call: "
        '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'
    ]


async def test_prompt_and_cancel_when_needs_at_least_one_child(tmp_path: Path) -> None:
    with pytest.raises(InvalidScenario, match="children"):
        await run_fake(tmp_path, [*OPEN, {"op": "promptAndCancelWhen", "text": "children", "children": 0}])


async def test_raw_lines_get_the_next_unclaimed_answer(tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [
        {"op": "raw", "line": "garbage", "expectError": -32700},
        {"op": "raw", "line": "garbage", "expectError": -32600},
        {"op": "raw", "line": "garbage"},
        {"op": "raw", "line": '{"jsonrpc":"2.0","method":"note"}'},
        {"op": "raw", "line": '[{"jsonrpc":"2.0","id":"a","method":"x"},{"jsonrpc":"2.0","id":"b","method":"y"}]',
         "expectError": -32600},
        {"op": "raw", "line": '{"jsonrpc":"2.0","id":"i","method":"initialize"}'},
        {"op": "raw", "line": '{"jsonrpc":"2.0","id":"j","method":"initialize"}', "expectError": -32601},
    ]  # fmt: skip
    result = await run_fake(tmp_path, steps)
    assert result.failures == [
        "step 2 (raw): expected error -32600, got error -32700: Parse error",
        "step 3 (raw): unexpected error -32700: Parse error",
        'step 7 (raw): expected an error, got the result {"protocolVersion":1}',
    ]


async def test_a_long_raw_line_is_written_whole(tmp_path: Path) -> None:
    result = await run_fake(tmp_path, [{"op": "raw", "line": "x", "repeat": 300_000, "expectError": -32700}])
    assert result.failures == [] and len(result.sent[0]) == 300_000


async def test_what_the_server_should_not_do_is_reported(tmp_path: Path) -> None:
    steps = [*OPEN, {"op": "prompt", "text": "noise"}, {"op": "prompt", "text": "unasked"},
             {"op": "prompt", "text": "replay-problem"}]  # fmt: skip
    result = await run_fake(tmp_path, steps, at_eof="fail")
    assert result.failures == [
        "the server exited with code 5",
        "stdout line 3 is not a JSON-RPC frame: 'not a frame'",
        'a response to no request: {"jsonrpc":"2.0","id":999,"result":{}}',
        "server stderr: ERROR acp_agent.llm.replay: replay: ScriptExhausted: no call left",
    ]
    assert result.exit_code == 5
    assert "ScriptExhausted" in result.stderr


async def test_a_step_without_answer_times_out_and_ends_the_driving(tmp_path: Path) -> None:
    steps = [*OPEN, {"op": "prompt", "text": "hang"}, {"op": "prompt", "text": "quick"}]
    result = await run_fake(tmp_path, steps, timeout=2)
    assert result.failures == ["step 3 (prompt): no answer within 2 s"]


async def test_a_server_that_ignores_eof_is_killed(tmp_path: Path) -> None:
    result = await run_fake(tmp_path, OPEN, at_eof="linger", timeout=2)
    assert result.failures == ["the server did not exit within 2 s of its stdin closing (killed)"]


async def test_a_server_that_dies_mid_step_ends_the_driving(tmp_path: Path) -> None:
    steps = [*OPEN, {"op": "prompt", "text": "exit"}, {"op": "prompt", "text": "quick"}]
    result = await run_fake(tmp_path, steps)
    assert result.failures == [
        "step 3 (prompt): the server closed its stdout before answering",
        "the server exited with code 3",
    ]


async def test_a_prompt_to_cancel_the_server_dies_on_ends_the_driving(tmp_path: Path) -> None:
    steps = [*OPEN, {"op": "promptAndCancel", "text": "exit"}, {"op": "raw", "line": "x"}]
    result = await run_fake(tmp_path, steps)
    assert result.failures[0] == "step 3 (promptAndCancel): the server closed its stdout before answering"


async def test_a_raw_line_the_server_dies_on_ends_the_driving(tmp_path: Path) -> None:
    result = await run_fake(tmp_path, [{"op": "raw", "line": '{"jsonrpc":"2.0","id":1,"method":"exit"}'}, *OPEN])
    assert result.failures[0] == "step 1 (raw): the server closed its stdout before answering"


async def test_a_refused_session_is_a_failure(tmp_path: Path) -> None:
    (tmp_path / "scenario" / "workspace").mkdir(parents=True)
    (tmp_path / "scenario" / "workspace" / "refuse-sessions").touch()
    result = await run_fake(tmp_path, [*OPEN, {"op": "prompt", "text": "quick"}])
    assert result.failures == [
        "step 2 (newSession): unexpected error -32602: Invalid params: no",
        "step 3 (prompt): no session yet: a newSession step must come first",
    ]


async def test_the_workspace_is_copied_into_the_cwd(tmp_path: Path) -> None:
    (tmp_path / "scenario" / "workspace" / "sub").mkdir(parents=True)
    (tmp_path / "scenario" / "workspace" / "sub" / "a.txt").write_text("hello")
    result = await run_fake(tmp_path, OPEN)
    assert (result.cwd / "sub" / "a.txt").read_text() == "hello"
    assert json.loads(result.sent[1])["params"]["cwd"] == str(result.cwd)


async def test_pre_seeded_sessions_are_stored_in_the_run_with_its_cwd(tmp_path: Path) -> None:
    stored = tmp_path / "scenario" / "sessions" / "old-id"
    stored.mkdir(parents=True)
    header = {"type": "session", "version": 0, "id": "old-id", "createdAt": 0, "cwd": "{{cwd}}", "route": "s1"}
    event = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "note": "in {{cwd}}/x"}}
    (stored / "session.jsonl").write_text(json.dumps(header) + "\n\n" + json.dumps(event) + "\n")
    steps = [
        {"op": "initialize"},
        {"op": "loadSession", "sessionId": "old-id"},
        {"op": "resumeSession", "sessionId": "old-id", "cwd": "/else", "expectError": -32601},
        {"op": "loadSession", "sessionId": "old-id", "expectError": -32002},
        {"op": "prompt", "text": "quick"},
    ]
    result = await run_fake(tmp_path, steps)
    assert result.logs == {
        "s1": [{**header, "cwd": str(result.cwd)}, {**event, "data": {"turn": 1, "note": f"in {result.cwd}/x"}}]
    }
    sent = [json.loads(line) for line in result.sent]
    assert [(f["method"], f["params"]) for f in sent[1:4]] == [
        ("session/load", {"sessionId": "old-id", "cwd": str(result.cwd), "mcpServers": []}),
        ("session/resume", {"sessionId": "old-id", "cwd": "/else", "mcpServers": []}),
        ("session/load", {"sessionId": "old-id", "cwd": str(result.cwd), "mcpServers": []}),
    ]
    assert result.failures == [
        "step 2 (loadSession): unexpected error -32601: Method not found",
        "step 4 (loadSession): expected error -32002, got error -32601: Method not found",
        "step 5 (prompt): no session yet: a newSession step must come first",  # no load succeeded
    ]


async def test_an_invalid_input_json_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InvalidScenario, match="input.json"):
        await run_fake(tmp_path, [{"op": "dance"}])
    with pytest.raises(InvalidScenario, match="No such file"):
        await run_scenario(tmp_path / "nowhere", tmp_path)


async def test_the_client_reports_a_closed_stdin_as_server_gone() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](1)
    await receive.aclose()
    client = Client(send, [])  # type: ignore[arg-type]  # duck-typed byte stream
    with pytest.raises(ServerGone):
        await client.write("{}")
    # An agent request that arrives when the client can no longer answer is let go.
    chunks = anyio.create_memory_object_stream[bytes](2)
    await chunks[0].send(b'{"jsonrpc":"2.0","id":0,"method":"x/unknown","params":{}}\n{"torn')
    chunks[0].close()
    await client.read(chunks[1])  # type: ignore[arg-type]
    assert client.stdout[-1] == '{"torn' and client.failures[0].startswith("stdout line 2 is not a JSON-RPC frame")


def test_logs_are_read_in_route_order_and_torn_lines_reported(tmp_path: Path) -> None:
    for directory, lines in {
        "a": ['{"type":"session","route":"s10"}'],
        "b": ['{"type":"session","route":"s2"}', "{torn"],
        "c": ['{"type":"session","route":"s2/call_1"}'],
        "d": [],
    }.items():
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "session.jsonl").write_text("".join(line + "\n" for line in lines))
    logs, problems = read_logs(tmp_path)
    assert list(logs) == ["d", "s2", "s2/call_1", "s10"]
    assert problems == ["session log b line 2 is not JSON: '{torn'"]


def test_route_key_sorts_naturally() -> None:
    assert sorted(["s10", "s2/#2", "s2", "s1/call_10", "s1/call_9"], key=route_key) == [
        "s1/call_9", "s1/call_10", "s2", "s2/#2", "s10",
    ]  # fmt: skip


async def test_elicitations_are_answered_from_the_queue_and_a_missing_answer_is_a_failure() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](10)
    answers = [{"action": "decline"}, {"action": "accept", "content": {"answer": "x"}}]
    forms = ClientCapabilities(elicitation={"form": {}})
    client = Client(send, [], elicitations=answers, capabilities=forms)  # type: ignore[arg-type]
    for request_id in (1, 2, 3):
        await client._answer({"id": request_id, "method": "elicitation/create", "params": {"message": "Which?"}}, 0)
    sent = [json.loads(receive.receive_nowait())["result"] for _ in range(3)]
    assert sent == [*answers, {"action": "cancel"}]
    assert client.failures == ["the agent asked 'Which?' and input.json has no answer left"]
    unused = Client(send, [], elicitations=answers[:1], capabilities=forms)  # type: ignore[arg-type]
    assert unused.leftovers() == ["elicitation answers left unused: [{'action': 'decline'}]"]


async def test_a_question_left_open_is_answered_cancelled_only_once_the_agent_withdraws_it() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](10)
    forms = ClientCapabilities(elicitation={"form": {}})
    client = Client(send, [], elicitations=["open"], capabilities=forms)  # type: ignore[arg-type]
    asked = client.watch(lambda frame: frame.get("method") == "elicitation/create")
    question = {"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {"message": "Which?"}}
    await client._receive(json.dumps(question).encode())
    await client._receive(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":9}}')
    await client._receive(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":[4]}}')
    with pytest.raises(anyio.WouldBlock):
        receive.receive_nowait()  # the form stays open: nothing answered it, another id withdrawn
    assert asked.is_set() and asked.lines == [0]
    assert client.leftovers() == ["questions left open that the agent never withdrew: requests [4]"]
    await client._receive(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":4}}')
    answer = json.loads(receive.receive_nowait())
    assert answer == {"jsonrpc": "2.0", "id": 4, "error": {"code": -32800, "message": "Request cancelled"}}
    assert client.sent_after == [(3,)] and client.leftovers() == []  # after the line that withdrew it
