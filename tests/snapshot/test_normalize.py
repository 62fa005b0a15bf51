from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from acp_agent.sandbox.backends import LAUNCHER
from acp_agent.snapshot.normalize import Normalized, normalize_run
from acp_agent.snapshot.result import RunResult
from acp_agent.tools.scratch import PREFIX as SCRATCH_PREFIX

SID_A = "aaaaaaaa-0000-4000-8000-000000000001"
SID_B = "bbbbbbbb-0000-4000-8000-000000000002"
OTHER = "cccccccc-0000-4000-8000-000000000003"
CWD = "/tmp/run-1/cwd"


def run(
    frames: list[Any],
    logs: dict[str, list[Any]] | None = None,
    sent: Sequence[Any] = (),
    after: list[tuple[int, ...]] | None = None,
) -> RunResult:
    """A run of these stdout frames and client lines (`after`: what each client line waited for)."""
    stdout = [f if isinstance(f, str) else json.dumps(f) for f in frames]
    lines = [f if isinstance(f, str) else json.dumps(f) for f in sent]
    return RunResult(stdout, "", logs or {}, Path(CWD), lines, 0, [], sent_after=after or [])


def frames_of(transcript: list[str]) -> list[tuple[str, Any]]:
    return [(line[:2], json.loads(line[3:])) for line in transcript]


def test_ids_are_renumbered_per_direction_in_order_of_appearance() -> None:
    frames = [
        {"jsonrpc": "2.0", "id": 7, "result": {}},
        {"jsonrpc": "2.0", "id": 40, "method": "session/request_permission", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -1}},
        {"jsonrpc": "2.0", "id": 41, "method": "fs/read_text_file", "params": {}},
        {"jsonrpc": "2.0", "id": 7, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}},
        {"jsonrpc": "2.0", "id": "chosen", "result": {}},
        [{"jsonrpc": "2.0", "id": 9, "result": {}}],
    ]
    ids = [
        frame[0]["id"] if isinstance(frame, list) else frame["id"]
        for _, frame in frames_of(normalize_run(run(frames)).transcript)
    ]
    assert ids == [1, 1, 2, 2, 1, None, "chosen", 3]


def test_a_cancel_request_names_its_senders_request_by_the_new_number() -> None:
    frames = [
        {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {}},
        {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {}},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "chosen"}},
    ]
    withdrawn = [frame["params"] for _, frame in frames_of(normalize_run(run(frames)).transcript)[2:]]
    assert withdrawn == [{"requestId": 2}, {"requestId": "chosen"}]


def test_the_clients_requests_share_the_numbering_of_the_answers_and_its_answers_that_of_the_agents_requests() -> None:
    frames = [
        {"jsonrpc": "2.0", "id": 40, "method": "fs/read_text_file", "params": {"path": f"{CWD}/a"}},
        {"jsonrpc": "2.0", "id": 41, "method": "terminal/create", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "result": {}},
    ]
    sent = [
        {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {}},  # before any frame
        {"jsonrpc": "2.0", "id": 41, "result": {"terminalId": OTHER}},  # answered first, placed after its request
        {"jsonrpc": "2.0", "id": 40, "result": {"content": "x"}},
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # a raw line answering nothing the agent asked
        "not json",
    ]
    transcript = normalize_run(run(frames, sent=sent, after=[(), (1,), (0,), (2,), (2,)])).transcript
    assert transcript == [
        '>> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
        '<< {"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"path":"{{cwd}}/a"}}',
        '>> {"jsonrpc":"2.0","id":1,"result":{"content":"x"}}',
        '<< {"jsonrpc":"2.0","id":2,"method":"terminal/create","params":{}}',
        '>> {"jsonrpc":"2.0","id":2,"result":{"terminalId":"{{uuid:1}}"}}',
        '<< {"jsonrpc":"2.0","id":1,"result":{}}',
        '>> {"jsonrpc":"2.0","id":3,"result":{}}',
        ">> not json",
    ]


def test_a_line_that_waited_for_several_frames_goes_after_the_last_in_the_canonical_order() -> None:
    def child(route: str, status: str = "in_progress") -> dict[str, Any]:
        kind = "tool_call" if status == "in_progress" else "tool_call_update"
        meta = {"acpAgent": {"route": f"s1/{route}", "parentToolCallId": route}}
        update = {"sessionUpdate": kind, "toolCallId": f"s1/{route}/x", "status": status, "_meta": meta}
        return {"method": "session/update", "params": {"update": update}}

    def call(call_id: str, status: str) -> dict[str, Any]:
        kind = "tool_call" if status == "in_progress" else "tool_call_update"
        return {
            "method": "session/update",
            "params": {"update": {"sessionUpdate": kind, "toolCallId": call_id, "status": status}},
        }

    cancel = {"method": "session/cancel", "params": {}}
    # b's child showed its call first, then a's: the cancel waited for both.
    frames = [call("a", "in_progress"), call("b", "in_progress"), child("b"), child("a"),
              child("a", "failed"), call("a", "failed"), child("b", "failed"), call("b", "failed")]  # fmt: skip
    transcript = normalize_run(run(frames, sent=[cancel], after=[(2, 3)])).transcript
    shown = [
        (d, f.get("method"), f.get("params", {}).get("update", {}).get("toolCallId")) for d, f in frames_of(transcript)
    ]
    # In the canonical order a's child reads first: the cancel follows b's child's call.
    assert shown == [
        ("<<", "session/update", "a"), ("<<", "session/update", "b"),
        ("<<", "session/update", "s1/a/x"), ("<<", "session/update", "s1/a/x"), ("<<", "session/update", "a"),
        ("<<", "session/update", "s1/b/x"), (">>", "session/cancel", None),
        ("<<", "session/update", "s1/b/x"), ("<<", "session/update", "b"),
    ]  # fmt: skip


def test_session_ids_uuids_and_the_cwd_get_placeholders_everywhere() -> None:
    frames = [
        {"id": 1, "result": {"sessionId": SID_B}},
        {"method": "session/update", "params": {"sessionId": SID_B, "update": {"text": f"{OTHER} in {CWD}/a.txt"}}},
        {"id": 2, "result": {"sessionId": SID_A, "note": f"{OTHER} {SID_B}"}},
    ]
    lines = normalize_run(run(frames)).transcript
    assert lines == [
        '<< {"id":1,"result":{"sessionId":"{{sessionId:1}}"}}',
        (
            '<< {"method":"session/update","params":{"sessionId":"{{sessionId:1}}",'
            '"update":{"text":"{{uuid:1}} in {{cwd}}/a.txt"}}}'
        ),
        '<< {"id":2,"result":{"sessionId":"{{sessionId:2}}","note":"{{uuid:1}} {{sessionId:1}}"}}',
    ]


def test_the_scenario_the_interpreter_and_loopback_ports_get_placeholders() -> None:
    servers = [
        {"command": sys.executable, "args": ["/fixtures/mcp/tools/../server.py"]},
        {"url": "http://127.0.0.1:40001/mcp"}, {"url": "http://127.0.0.1:40002/sse"}, {"url": "http://127.0.0.1:40001/x"},
    ]  # fmt: skip
    sent = [{"id": 1, "method": "session/new", "params": {"mcpServers": servers}}]
    result = replace(run([], sent=sent), scenario=Path("/fixtures/mcp/tools"))
    assert normalize_run(result).transcript == [
        '>> {"id":1,"method":"session/new","params":{"mcpServers":['
        '{"command":"{{python}}","args":["{{scenario}}/../server.py"]},'
        '{"url":"http://127.0.0.1:{{port:1}}/mcp"},{"url":"http://127.0.0.1:{{port:2}}/sse"},{"url":"http://127.0.0.1:{{port:1}}/x"}]}}'
    ]


def test_logs_share_the_tables_and_lose_their_times() -> None:
    child = "dddddddd-0000-4000-8000-000000000004"
    logs: dict[str, list[Any]] = {
        "s1": [
            {"type": "session", "id": SID_A, "createdAt": 123, "cwd": CWD},
            {"type": "turn/start", "seq": 0, "time": 5},
        ],
        "s1/call_1": [{"type": "session", "id": child, "createdAt": 9, "parentSession": SID_A, "cwd": CWD}],
        "broken": [[CWD], 3],
    }
    normalized = normalize_run(run([{"id": 1, "result": {"sessionId": SID_A}}], logs))
    assert normalized.logs == {
        "s1": [
            '{"type":"session","id":"{{sessionId:1}}","createdAt":0,"cwd":"{{cwd}}"}',
            '{"type":"turn/start","seq":0,"time":0}',
        ],
        "s1/call_1": [
            '{"type":"session","id":"{{sessionId:2}}","createdAt":0,"parentSession":"{{sessionId:1}}","cwd":"{{cwd}}"}'
        ],
        "broken": ['["{{cwd}}"]', "3"],
    }


def test_a_line_that_is_not_json_is_kept_and_a_long_one_cut() -> None:
    assert normalize_run(run([f"oops {CWD}", "3"], sent=["x" * 5000])).transcript == [
        f">> {'x' * 100}… (5000 characters)",
        "<< oops {{cwd}}",
        "<< 3",
    ]


def test_the_snapshot_text_is_the_summary_the_transcript_then_each_log_under_its_route() -> None:
    text = Normalized(["> go", "", "  stop reason: end_turn", ""], ["<< {}", ">> []"], {"s1": ["{}"], "s2": []}).text()
    assert text == (
        "--- summary ---\n> go\n\n  stop reason: end_turn\n\n--- transcript ---\n<< {}\n>> []\n\n"
        "--- log s1 ---\n{}\n\n--- log s2 ---\n"
    )


def test_the_sandboxs_launcher_a_sessions_temporary_directory_and_the_cwds_directory_get_placeholders() -> None:
    scratch = [os.path.join(tempfile.gettempdir(), f"{SCRATCH_PREFIX}{name}") for name in ("ab_1", "cd_2")]
    argv = [sys.executable, "-I", "-S", LAUNCHER, "--write", scratch[0], "--write", scratch[1], "--write", scratch[0]]
    frame = {
        "id": 1,
        "method": "terminal/create",
        "params": {"command": argv, "out": f"{os.path.dirname(CWD)}/shared.txt"},
    }
    assert normalize_run(run([frame])).transcript == [
        '<< {"id":1,"method":"terminal/create","params":{"command":["{{python}}","-I","-S","{{launcher}}",'
        '"--write","{{tmpdir:1}}","--write","{{tmpdir:2}}","--write","{{tmpdir:1}}"],"out":"{{workdir}}/shared.txt"}}'
    ]
    at_root = RunResult([json.dumps(frame)], "", {}, Path("/cwd"), [], 0, [], sent_after=[])
    assert '"out":"/' in normalize_run(at_root).transcript[0]  # `/` is every path's start: no placeholder


def test_a_commands_overflow_file_gets_a_placeholder_in_its_sessions_directory() -> None:
    directory = os.path.join(tempfile.gettempdir(), f"{SCRATCH_PREFIX}ab_1")
    files = [f"{directory}/output-{name}.txt" for name in ("k3_x9q1z", "p0_q7w2e", "k3_x9q1z")]
    frame = {"id": 1, "result": {"kept": files, "elsewhere": f"{CWD}/output-k3_x9q1z.txt"}}
    assert normalize_run(run([frame])).transcript == [
        '<< {"id":1,"result":{"kept":["{{tmpdir:1}}/{{tmpfile:1}}","{{tmpdir:1}}/{{tmpfile:2}}",'
        '"{{tmpdir:1}}/{{tmpfile:1}}"],"elsewhere":"{{cwd}}/output-k3_x9q1z.txt"}}'
    ]
