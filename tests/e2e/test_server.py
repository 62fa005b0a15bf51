"""The ACP methods through the real server process, spoken as raw NDJSON on its stdio."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.wire import RECORD_CONFIG, SNAPSHOT_CONFIG, Frame, Wire, spawn_server
from tests.paths import FIXTURES, UPSTREAM

pytestmark = pytest.mark.anyio

AGENT_CAPABILITIES = {
    "loadSession": True,
    "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},  # replay-alt has vision
    "mcpCapabilities": {"http": True, "sse": True},
    "sessionCapabilities": {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
        "additionalDirectories": {},
        "title": {},
        "systemPrompt": {},
        "fork": {},
    },
    "_meta": {"acpAgent": {"promptQueueing": True}},
}


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def check_stdout(wire: Wire) -> None:
    """Stdout held JSON-RPC 2.0 frames and nothing else."""
    assert wire.garbage == []
    for frame in wire.received:
        assert frame["jsonrpc"] == "2.0"
        assert ("method" in frame) != ("result" in frame or "error" in frame), frame


def session_log(sessions: Path, session_id: str) -> list[dict[str, Any]]:
    lines = (sessions / session_id / "session.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def message_text(wire: Wire, session_id: str, kind: str = "agent_message_chunk") -> str:
    return "".join(
        u["update"]["content"]["text"] for u in wire.updates(session_id) if u["update"]["sessionUpdate"] == kind
    )


class Scripted:
    """A scripted-model server: the script, the session directory and a workspace in `tmp_path`."""

    def __init__(self, tmp_path: Path, calls: Any) -> None:
        self.sessions = tmp_path / "sessions"
        self.cwd = tmp_path / "work"
        self.cwd.mkdir()
        self.script = tmp_path / "script.json"
        self.script.write_text(json.dumps(calls), encoding="utf-8")
        self.exit_code: int | None = None

    @asynccontextmanager
    async def serve(self, *, config: Path = RECORD_CONFIG, env: dict[str, str] | None = None) -> AsyncIterator[Wire]:
        env = {**(env or {}), "ACP_AGENT_SCRIPT": str(self.script), "ACP_AGENT_SESSIONS": str(self.sessions)}
        async with spawn_server(config=config, env=env) as wire:
            yield wire
            self.exit_code = await wire.finish()
        check_stdout(wire)

    async def new_session(self, wire: Wire) -> str:
        await wire.request("initialize", {"protocolVersion": 1})
        response = await wire.request("session/new", {"cwd": str(self.cwd), "mcpServers": []})
        return str(response["result"]["sessionId"])


def result_of(response: Frame) -> Any:
    assert "result" in response, response
    return response["result"]


def error_of(response: Frame) -> tuple[int, str]:
    assert "error" in response, response
    return response["error"]["code"], response["error"]["message"]


async def test_initialize_answers_version_1_and_refuses_every_authentication_method(tmp_path: Path) -> None:
    server = Scripted(tmp_path, [])
    async with server.serve() as wire:
        for sent in (1, 0, 2, 99):
            response = await wire.request(
                "initialize",
                {
                    "protocolVersion": sent,
                    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            )
            result = result_of(response)
            assert result["protocolVersion"] == 1
            assert result["authMethods"] == []
            assert result["agentCapabilities"] == AGENT_CAPABILITIES
            assert result["agentInfo"]["name"] == "acp-agent"
        for method_id in ("api-key", "", "agent"):
            code, message = error_of(await wire.request("authenticate", {"methodId": method_id}))
            assert code == -32602
            assert repr(method_id) in message
    assert server.exit_code == 0


async def test_session_new_validates_cwd_directories_and_mcp_servers(tmp_path: Path) -> None:
    server = Scripted(tmp_path, [])
    async with server.serve() as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        code, message = error_of(await wire.request("session/new", {"cwd": "work", "mcpServers": []}))
        assert code == -32602
        assert "cwd" in message and "'work'" in message
        for extra, said in (
            (["extra"], "additionalDirectories[0] must be an absolute path, got 'extra'"),
            ([str(tmp_path), str(tmp_path / "gone")], f"additionalDirectories[1]: {str(tmp_path / 'gone')!r} is not"),
        ):
            params = {"cwd": str(server.cwd), "mcpServers": [], "additionalDirectories": extra}
            code, message = error_of(await wire.request("session/new", params))
            assert code == -32602
            assert message.startswith(f"Invalid params: {said}")
        assert wire.stderr_text.count("MCP") == 0
        acp = {"type": "acp", "name": "inside", "serverId": "s-1"}
        code, message = error_of(await wire.request("session/new", {"cwd": str(server.cwd), "mcpServers": [acp]}))
        assert (code, message) == (
            -32602,
            "Invalid params: mcpServers[0]: transport 'acp' is not supported (stdio, http, sse)",
        )
        # A server that cannot start leaves the session usable (fixtures/mcp/cannot-start shows the rest).
        mcp = {"name": "files", "command": "/usr/bin/mcp-files", "args": ["--root", "/"], "env": []}
        created = await wire.request(
            "session/new", {"cwd": str(server.cwd), "mcpServers": [mcp], "additionalDirectories": []}
        )
        session_id = created["result"]["sessionId"]
    assert result_of(created)["sessionId"] == session_id  # with the modes and config options
    assert set(result_of(created)) == {"sessionId", "modes", "configOptions"}
    assert session_log(server.sessions, session_id)[0]["cwd"] == str(server.cwd)


AUDIO = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}


async def test_an_unsupported_block_is_refused_naming_what_the_agent_takes(tmp_path: Path) -> None:
    """Image blocks are among them only when a model offered takes images (`promptCapabilities`)."""
    server = Scripted(tmp_path, [])
    config = tmp_path / "cordis.yml"
    without_vision = "{provider: replay, model: replay, models: [{id: replay, name: Replay}]}"
    config.write_text(f"- include: {RECORD_CONFIG}\n- id: agents\n  config: {without_vision}\n", encoding="utf-8")
    refusals = {}
    for images, composition in ((True, RECORD_CONFIG), (False, config)):
        async with server.serve(config=composition) as wire:
            answer = result_of(await wire.request("initialize", {"protocolVersion": 1}))
            assert answer["agentCapabilities"]["promptCapabilities"]["image"] is images
            created = await wire.request("session/new", {"cwd": str(server.cwd), "mcpServers": []})
            prompt = {"sessionId": result_of(created)["sessionId"], "prompt": [AUDIO]}
            refusals[images] = error_of(await wire.request("session/prompt", prompt))
    unsupported = "Invalid params: prompt[0]: content type 'audio' is not supported"
    assert refusals == {
        True: (-32602, f"{unsupported} (this agent takes text, resource_link, resource and image)"),
        False: (-32602, f"{unsupported} (this agent takes text, resource_link and resource)"),
    }


async def test_prompt_errors_name_the_culprit_and_leave_the_session_usable(tmp_path: Path) -> None:
    server = Scripted(tmp_path, [{"text": "Still here."}])
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        code, message = error_of(
            await wire.request("session/prompt", {"sessionId": "no-such-session", "prompt": [text("hi")]})
        )
        assert (code, message) == (-32002, "Resource not found: session 'no-such-session'")
        unsupported = [
            (AUDIO, "'audio'"),
            ({"text": "no type"}, "None"),
        ]
        for block, named in unsupported:
            code, message = error_of(
                await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("look"), block]})
            )
            assert code == -32602
            assert "prompt[1]" in message and named in message and "not supported" in message
        code, message = error_of(
            await wire.request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "resource_link"}]})
        )
        assert code == -32602
        assert "prompt[0]" in message and "uri" in message and "name" in message
        image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        code, message = error_of(
            await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("look"), image]})
        )
        assert (code, message) == (-32602, "Invalid params: model replay does not take images")
        code, message = error_of(
            await wire.request(
                "session/prompt", {"sessionId": session_id, "prompt": [{"type": "resource", "resource": {}}]}
            )
        )
        assert code == -32602 and "prompt[0]" in message and "uri" in message
        link = {"type": "resource_link", "uri": "file:///etc/hosts", "name": "hosts"}
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("hi"), link]})
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert message_text(wire, session_id) == "Still here."
    log = session_log(server.sessions, session_id)
    assert [e["data"]["turn"] for e in log if e.get("type") == "turn/start"] == [1]  # refused prompts left no trace
    assert next(e for e in log if e.get("type") == "user/message")["data"]["content"] == [text("hi"), link]


FAILING_MODEL_CONFIG = """\
- {id: sessions, name: acp_agent.session.plugin}
- {id: llm, name: acp_agent.llm.service}
- {id: tools, name: acp_agent.tools.plugin}
- {id: agents, name: acp_agent.agent.plugin, config: {provider: failing, model: failing}}
- {id: model, name: tests.e2e.failing_model}
"""


async def test_an_exception_with_a_non_string_code_fails_the_turn_and_the_server_lives_on(tmp_path: Path) -> None:
    config = tmp_path / "cordis.yml"
    config.write_text(FAILING_MODEL_CONFIG, encoding="utf-8")
    sessions = tmp_path / "sessions"
    async with spawn_server(config=config, env={"ACP_AGENT_SESSIONS": str(sessions)}) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = result_of(await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["sessionId"]
        for _ in range(2):  # the second prompt is answered too: the server outlived the first failure
            code, message = error_of(
                await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("hi")]})
            )
            assert (code, message) == (-32603, "Internal error: turn failed: upstream answered a JSON-RPC error")
        assert await wire.finish() == 0
    check_stdout(wire)
    ends = [e["data"] for e in session_log(sessions, session_id) if e.get("type") == "turn/end"]
    failed = {"kind": "error", "step": 1, "message": "upstream answered a JSON-RPC error", "code": "-32603"}
    assert ends == [{"turn": 1, "reason": failed}, {"turn": 2, "reason": failed}]


def said_and_answered(wire: Wire, answers: dict[int, str]) -> list[str]:
    """The agent's message text and the answers to the requests in `answers`, in wire order."""
    seen = []
    for frame in wire.received:
        update = frame.get("params", {}).get("update", {})
        if update.get("sessionUpdate") == "agent_message_chunk":
            seen.append(update["content"]["text"])
        elif "method" not in frame and frame.get("id") in answers:
            seen.append(answers[frame["id"]])
    return seen


async def test_a_second_prompt_on_a_busy_session_waits_for_the_first_to_be_answered(tmp_path: Path) -> None:
    go = tmp_path / "go"
    wait_for_go = f"while [ ! -e {go} ]; do sleep 0.01; done; echo went"
    server = Scripted(
        tmp_path,
        [
            {"toolCalls": [{"id": "call_wait", "name": "bash", "arguments": {"command": wait_for_go}}]},
            {"text": "First."},
            {"text": "Second."},
        ],
    )
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        first = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("one")]})
        await wire.wait_for(lambda f: f.get("params", {}).get("update", {}).get("sessionUpdate") == "tool_call")
        second = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("two")]})
        go.touch()
        answers = [await wire.response(first), await wire.response(second)]
    assert [result_of(answer) for answer in answers] == [{"stopReason": "end_turn"}] * 2
    # The second turn's frames come after the first prompt's answer, never among its frames.
    assert said_and_answered(wire, {first: "one answered", second: "two answered"}) == [
        "First.",
        "one answered",
        "Second.",
        "two answered",
    ]
    log = session_log(server.sessions, session_id)
    assert [e["data"]["content"] for e in log if e.get("type") == "user/message"] == [[text("one")], [text("two")]]


async def test_cancel_ends_a_running_prompt_and_is_a_no_op_for_unknown_or_idle_sessions(tmp_path: Path) -> None:
    server = Scripted(tmp_path, [{"hang": True}, {"text": "Fine."}])
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        await wire.notify("session/cancel", {"sessionId": session_id})  # idle
        await wire.notify("session/cancel", {"sessionId": "no-such-session"})
        await wire.notify("session/cancel", {"sessionId": 7})  # wrong type: a notification is never answered
        await wire.notify("session/cancel", {})
        prompt = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("hang")]})
        # The turn is running (the model streams): a cancel read before it starts would end it
        # before its model call, and the script's entries would shift.
        await wire.wait_for(
            lambda f: f.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
        )
        await wire.notify("session/cancel", {"sessionId": session_id})
        assert result_of(await wire.response(prompt)) == {"stopReason": "cancelled"}
        await wire.notify("session/cancel", {"sessionId": session_id})  # idle again
        again = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("again")]})
        assert result_of(again) == {"stopReason": "end_turn"}
    assert [f["id"] for f in wire.responses()] == [1, 2, prompt, prompt + 1]
    assert message_text(wire, session_id) == "partialFine."
    ends = [e["data"]["reason"] for e in session_log(server.sessions, session_id) if e.get("type") == "turn/end"]
    assert ends == [{"kind": "aborted", "reason": "cancelled by the client"}, {"kind": "completed"}]


async def test_read_order_decides_what_a_cancel_ends_whichever_request_runs_first(tmp_path: Path) -> None:
    # A batch's items are handled a task later than a frame read after the batch, so in one write
    # `[prompt]` then a cancel runs the cancel's handler first, and `[cancel]` then a prompt the
    # prompt's: the cancel still ends the prompt read before it, and only that one.
    server = Scripted(tmp_path, [{"text": "Ran."}])
    async with server.serve() as wire:
        session_id = await server.new_session(wire)

        def prompt(request_id: int, said: str) -> dict[str, Any]:
            params = {"sessionId": session_id, "prompt": [text(said)]}
            return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}

        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        await wire.send_raw(f"{json.dumps([prompt(101, 'Before.')])}\n{json.dumps(cancel)}\n".encode())
        assert result_of(await wire.response(101)) == {"stopReason": "cancelled"}
        await wire.send_raw(f"{json.dumps([cancel])}\n{json.dumps(prompt(102, 'After.'))}\n".encode())
        assert result_of(await wire.response(102)) == {"stopReason": "end_turn"}
    assert message_text(wire, session_id) == "Ran."
    ends = [e["data"]["reason"] for e in session_log(server.sessions, session_id) if e.get("type") == "turn/end"]
    assert ends == [{"kind": "aborted", "reason": "cancelled by the client"}, {"kind": "completed"}]


async def test_turn_failures_and_limits_answer_the_prompt(tmp_path: Path) -> None:
    many_steps = [{"toolCalls": [{"id": f"c{i}", "name": "no_such_tool", "arguments": {}}]} for i in range(50)]
    server = Scripted(
        tmp_path,
        [
            {"throw": {"message": "simulated provider error (HTTP 401)", "code": "AUTH", "status": 401}},
            {"throw": {"message": "set DEEPSEEK_API_KEY to use the model", "code": "MISSING_CREDENTIAL"}},
            {"text": "Cut", "finish": "max-tokens"},
            *many_steps,
        ],
    )
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        failed = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("fail")]})
        no_key = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("no key")]})
        cut = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("cut")]})
        capped = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("loop")]})
    assert error_of(failed) == (-32603, "Internal error: turn failed: simulated provider error (HTTP 401)")
    assert error_of(no_key) == (-32000, "set DEEPSEEK_API_KEY to use the model")  # authentication required
    assert result_of(cut) == {"stopReason": "max_tokens"}
    assert result_of(capped) == {"stopReason": "max_turn_requests"}
    failures = [u["update"] for u in wire.updates(session_id) if u["update"].get("status") == "failed"]
    assert len(failures) == 50
    assert failures[0]["content"] == [{"type": "content", "content": text("Error: unknown tool 'no_such_tool'")}]


async def test_garbage_is_answered_or_ignored_and_the_server_keeps_serving(tmp_path: Path) -> None:
    server = Scripted(tmp_path, [])
    async with server.serve() as wire:
        await wire.send_raw(b"{this is not json\n")
        await wire.send_raw(b"\n   \n")
        pad = b"x" * 1_000_000  # a 1 MB request whose params lack what initialize needs
        await wire.send_raw(b'{"jsonrpc":"2.0","id":"big","method":"initialize","params":{"pad":"' + pad + b'"}}\n')
        await wire.send_raw(b"[" + b"1," * 500_000 + b"1]\n")  # a 1 MB line that is valid JSON but no request
        await wire.send_raw(b"\xff\xfe\xfd\n")
        await wire.send({"jsonrpc": "2.0", "id": "t", "method": "initialize", "params": {"protocolVersion": "1"}})
        await wire.send({"jsonrpc": "2.0", "id": "p", "method": "initialize", "params": [1]})
        await wire.send({"jsonrpc": "2.0", "id": "u", "method": "session/no_such_method", "params": {}})
        await wire.send({"jsonrpc": "2.0", "method": "no/such/notification", "params": {}})
        await wire.send({"jsonrpc": "2.0", "id": [1], "result": {}})  # a response to nothing, with an odd id
        await wire.send({"jsonrpc": "2.0", "id": 12345, "error": {"code": 1, "message": "stray"}})
        await wire.send({"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {"protocolVersion": 1}})
        answered = await wire.request("initialize", {"protocolVersion": 1})
    assert answered["result"]["protocolVersion"] == 1
    errors = [(f.get("id"), f["error"]["code"]) for f in wire.responses() if "error" in f]
    # Each request runs in its own task, so the answers may come in any order.
    assert sorted(errors, key=repr) == sorted(
        [
            (None, -32700),
            ("big", -32602),
            (None, -32600),
            (None, -32700),
            ("t", -32602),
            ("p", -32602),
            ("u", -32601),
            (None, -32600),
        ],
        key=repr,
    )
    assert len(wire.responses()) == len(errors) + 1
    assert "Traceback" not in wire.stderr_text


async def test_stdin_eof_during_a_turn_cancels_it_and_exits_0_with_the_log_closed(tmp_path: Path) -> None:
    server = Scripted(tmp_path, [{"text": "One."}, {"hang": True}])
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        first = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("one")]})
        assert result_of(first) == {"stopReason": "end_turn"}
        hanging = await wire.start("session/prompt", {"sessionId": session_id, "prompt": [text("two")]})
        await wire.wait_for(lambda f: f.get("params", {}).get("update", {}).get("content", {}).get("text") == "partial")
    assert server.exit_code == 0
    assert wire.received[-1] == {"jsonrpc": "2.0", "result": {"stopReason": "cancelled"}, "id": hanging}
    log = session_log(server.sessions, session_id)
    assert log[0]["type"] == "session"
    assert log[-1]["type"] == "turn/end"
    assert log[-1]["data"] == {"turn": 2, "reason": {"kind": "aborted", "reason": "the client closed the connection"}}
    assert [e["seq"] for e in log[1:]] == list(range(len(log) - 1))


async def test_a_process_of_the_snapshot_composition_that_ran_no_prompt_says_nothing_of_the_fixtures(
    tmp_path: Path,
) -> None:
    env = {"ACP_AGENT_FIXTURES": str(FIXTURES / "text-turn"), "ACP_AGENT_SESSIONS": str(tmp_path / "sessions")}
    async with spawn_server(config=SNAPSHOT_CONFIG, env=env) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        result_of(await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))
        assert result_of(await wire.request("session/list", {}))["sessions"] == []  # none prompted yet
        assert await wire.finish() == 0
    assert "replay" not in wire.stderr_text and "ERROR" not in wire.stderr_text


UPDATES_UPSTREAM_LACKS = ("available_commands_update", "session_info_update", "usage_update")


@pytest.mark.skipif(not (UPSTREAM / "text-turn").is_dir(), reason="shared upstream scenarios absent")
async def test_a_replayed_upstream_turn_through_the_snapshot_config(tmp_path: Path) -> None:
    scenario = UPSTREAM / "text-turn"
    golden = [json.loads(line) for line in (scenario / "stdout.golden.jsonl").read_text().splitlines()]
    sessions = tmp_path / "sessions"
    env = {"ACP_AGENT_FIXTURES": str(scenario), "ACP_AGENT_SESSIONS": str(sessions)}
    async with spawn_server(config=SNAPSHOT_CONFIG, env=env) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        created = await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        session_id = result_of(created)["sessionId"]
        prompt = json.loads((scenario / "input.json").read_text())["steps"][2]["text"]
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text(prompt)]})
        exit_code = await wire.finish()
    check_stdout(wire)
    assert exit_code == 0
    assert result_of(answered) == golden[-1]["result"]
    golden_updates = [f["params"]["update"] for f in golden if f.get("method") == "session/update"]
    ours = [u["update"] for u in wire.updates(session_id)]
    # The upstream agent sent no command list, no title and no usage; ours sends them, and otherwise
    # the same.
    assert [u["sessionUpdate"] for u in ours if u["sessionUpdate"] in UPDATES_UPSTREAM_LACKS] == [
        "available_commands_update", "session_info_update", "usage_update"
    ]  # fmt: skip
    assert [u for u in ours if u["sessionUpdate"] not in UPDATES_UPSTREAM_LACKS] == golden_updates
    assert "replay:" not in wire.stderr_text
    log = session_log(sessions, session_id)
    assert log[0]["route"] == "s1"
    assert log[-1] == {**log[-1], "type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}}


async def test_a_boolean_for_a_select_option_is_refused_naming_the_option(tmp_path: Path) -> None:
    server = Scripted(tmp_path, [])
    async with server.serve() as wire:
        session_id = await server.new_session(wire)
        refused = {
            config_id: await wire.request(
                "session/set_config_option",
                {"sessionId": session_id, "configId": config_id, "type": "boolean", "value": value},
            )
            for config_id, value in (("mode", True), ("model", False), ("verbose", True))
        }
        kept = await wire.request(
            "session/set_config_option", {"sessionId": session_id, "configId": "mode", "value": "plan"}
        )
    assert error_of(refused["mode"]) == (
        -32602,
        ("Invalid params: value: 'mode' is a select option, set to one of its values ('ask', 'auto', 'plan', 'full'), "
         "not to true"),
    )  # fmt: skip
    assert error_of(refused["model"]) == (
        -32602,
        ("Invalid params: value: 'model' is a select option, set to one of its values ('replay', 'replay-alt'), "
         "not to false"),
    )  # fmt: skip
    assert error_of(refused["verbose"]) == (
        -32602,
        "Invalid params: configId 'verbose' is not a config option of this session ('mode', 'model', 'thought_level')",
    )  # fmt: skip
    assert [o["currentValue"] for o in result_of(kept)["configOptions"]][:2] == ["plan", "replay"]


def without_deltas(scenario: Path, into: Path) -> None:
    """`scenario`'s fixtures with every text and reasoning delta left out: each block's text is
    only in its `block-end` (as some recordings have it)."""
    into.mkdir()
    kept = []
    for line in (scenario / "session.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        chunk = event.get("data", {}).get("chunk", {}) if event.get("type") == "assistant/chunk" else {}
        if chunk.get("type") not in ("text-delta", "reasoning-delta"):
            kept.append(event)
    for seq, event in enumerate(kept[1:]):
        event["seq"] = seq
    (into / "session.jsonl").write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")


async def test_a_block_recorded_without_deltas_reaches_the_client_whole_live_and_on_load(tmp_path: Path) -> None:
    fixtures, sessions = tmp_path / "fixtures", tmp_path / "sessions"
    without_deltas(FIXTURES / "text-turn", fixtures)
    env = {"ACP_AGENT_FIXTURES": str(fixtures), "ACP_AGENT_SESSIONS": str(sessions)}
    async with spawn_server(config=SNAPSHOT_CONFIG, env=env) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = result_of(await wire.request("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["sessionId"]
        prompt = [text("Reply with exactly the word PONG. Do not use any tools.")]
        answered = await wire.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
        live = len(wire.received)
        loaded = await wire.request("session/load", {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []})
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert "error" not in loaded
    chunks = [
        (f["params"]["update"]["sessionUpdate"], f["params"]["update"]["content"]["text"])
        for f in wire.received
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"].startswith("agent_")
    ]
    whole = [
        ("agent_thought_chunk", "The user wants the single word PONG and no tools."),
        ("agent_message_chunk", "PONG"),
    ]
    assert chunks == whole * 2  # live, then replayed by session/load
    assert live < len(wire.received)
    assert "replay:" not in wire.stderr_text
