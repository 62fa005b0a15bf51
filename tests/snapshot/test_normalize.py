from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_agent.snapshot.normalize import Normalized, normalize_run
from acp_agent.snapshot.runner import RunResult

SID_A = "aaaaaaaa-0000-4000-8000-000000000001"
SID_B = "bbbbbbbb-0000-4000-8000-000000000002"
OTHER = "cccccccc-0000-4000-8000-000000000003"
CWD = "/tmp/run-1/cwd"


def run(frames: list[Any], logs: dict[str, list[Any]] | None = None) -> RunResult:
    stdout = [f if isinstance(f, str) else json.dumps(f) for f in frames]
    return RunResult(stdout, "", logs or {}, Path(CWD), [], 0, [])


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
    ids = [json.loads(line) for line in normalize_run(run(frames)).transcript]
    assert [f[0]["id"] if isinstance(f, list) else f["id"] for f in ids] == [1, 1, 2, 2, 1, None, "chosen", 3]


def test_session_ids_uuids_and_the_cwd_get_placeholders_everywhere() -> None:
    frames = [
        {"id": 1, "result": {"sessionId": SID_B}},
        {"method": "session/update", "params": {"sessionId": SID_B, "update": {"text": f"{OTHER} in {CWD}/a.txt"}}},
        {"id": 2, "result": {"sessionId": SID_A, "note": f"{OTHER} {SID_B}"}},
    ]
    lines = normalize_run(run(frames)).transcript
    assert lines == [
        '{"id":1,"result":{"sessionId":"{{sessionId:1}}"}}',
        '{"method":"session/update","params":{"sessionId":"{{sessionId:1}}","update":{"text":"{{uuid:1}} in {{cwd}}/a.txt"}}}',
        '{"id":2,"result":{"sessionId":"{{sessionId:2}}","note":"{{uuid:1}} {{sessionId:1}}"}}',
    ]


def test_logs_share_the_tables_and_lose_their_times() -> None:
    child = "dddddddd-0000-4000-8000-000000000004"
    logs: dict[str, list[Any]] = {
        "s1": [{"type": "session", "id": SID_A, "createdAt": 123, "cwd": CWD}, {"type": "turn/start", "seq": 0, "time": 5}],
        "s1/call_1": [{"type": "session", "id": child, "createdAt": 9, "parentSession": SID_A, "cwd": CWD}],
        "broken": [[CWD], 3],
    }
    normalized = normalize_run(run([{"id": 1, "result": {"sessionId": SID_A}}], logs))
    assert normalized.logs == {
        "s1": [
            '{"type":"session","id":"{{sessionId:1}}","createdAt":0,"cwd":"{{cwd}}"}',
            '{"type":"turn/start","seq":0,"time":0}',
        ],
        "s1/call_1": ['{"type":"session","id":"{{sessionId:2}}","createdAt":0,"parentSession":"{{sessionId:1}}","cwd":"{{cwd}}"}'],
        "broken": ['["{{cwd}}"]', "3"],
    }


def test_a_line_that_is_not_json_is_kept() -> None:
    assert normalize_run(run([f"oops {CWD}"])).transcript == ["oops {{cwd}}"]


def test_the_snapshot_text_is_the_transcript_then_each_log_under_its_route() -> None:
    text = Normalized(["{}", "[]"], {"s1": ["{}"], "s2": []}).text()
    assert text == "--- stdout ---\n{}\n[]\n\n--- log s1 ---\n{}\n\n--- log s2 ---\n"


def test_the_clients_answers_to_the_agents_requests_follow_the_transcript_numbered_like_them() -> None:
    frames = [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 40, "method": "fs/read_text_file", "params": {"path": f"{CWD}/a"}},
        {"jsonrpc": "2.0", "id": 41, "method": "terminal/create", "params": {}},
    ]
    sent = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),  # a request of ours
        json.dumps({"jsonrpc": "2.0", "id": 41, "result": {"terminalId": OTHER}}),  # answered first
        json.dumps({"jsonrpc": "2.0", "id": 40, "result": {"content": "x"}}),
        json.dumps({"jsonrpc": "2.0", "id": 99, "result": {}}),  # a raw line answering nothing the agent asked
        "not json",
    ]
    result = RunResult([json.dumps(f) for f in frames], "", {}, Path(CWD), sent, 0, [])
    normalized = normalize_run(result)
    assert normalized.answers == [
        '{"jsonrpc":"2.0","id":1,"result":{"content":"x"}}',
        '{"jsonrpc":"2.0","id":2,"result":{"terminalId":"{{uuid:1}}"}}',
    ]
    assert normalized.text().split("\n")[4:8] == ["", "--- client answers ---", *normalized.answers]
