"""Every frame of every transcript we produce, in both directions, held against the protocol.

The transcripts come from the snapshot runner: the upstream scenarios (when present), the
project's `fixtures/*` scenarios and a few scripted ones that reach corners the others do not
(failed and unknown tools, max tokens, a turn error, a resource link, an editor terminal killed at
a timeout). Each frame is checked
(a) against the official `acp` package's model for its method and direction, round-tripped so
that the package's lenient parsing cannot hide a dropped, coerced or salvaged field, and (b)
against its definition in the protocol's JSON Schema (`tests/data/acp-schema`, a copy of a
release) with Draft 2020-12. What the package has no model for (the compaction updates, the
client's `session.compaction`) is checked by the schema alone.
The frames the official package has no models for (child sessions: `subagent_update`, `session_message`,
`session_message_chunk`, and an `initialize` advertising `subagents`) are checked (c) against the
unstable JSON Schema instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import pytest
from acp import schema as official
from pydantic import BaseModel, RootModel

from acp_agent.snapshot.result import RunResult
from acp_agent.snapshot.runner import run_scenario
from tests.e2e.wire import RECORD_CONFIG
from tests.paths import ACP_SCHEMA, ACP_UNSTABLE_SCHEMA, FIXTURES, UPSTREAM
from tests.runs import ScenarioRuns, side_by_side

Direction = Literal["agent", "client"]
"""Who wrote the frame: the agent (our stdout) or the client (what the runner sent us)."""

Models = tuple[type[BaseModel], type[BaseModel] | None]

# Methods the client calls on the agent: params model, result model (None: a notification).
AGENT_METHODS: dict[str, Models] = {
    "initialize": (official.InitializeRequest, official.InitializeResponse),
    "authenticate": (official.AuthenticateRequest, official.AuthenticateResponse),
    "session/new": (official.NewSessionRequest, official.NewSessionResponse),
    "session/load": (official.LoadSessionRequest, official.LoadSessionResponse),
    "session/list": (official.ListSessionsRequest, official.ListSessionsResponse),
    "session/resume": (official.ResumeSessionRequest, official.ResumeSessionResponse),
    "session/close": (official.CloseSessionRequest, official.CloseSessionResponse),
    "session/delete": (official.DeleteSessionRequest, official.DeleteSessionResponse),
    "session/fork": (official.ForkSessionRequest, official.ForkSessionResponse),
    "session/set_mode": (official.SetSessionModeRequest, official.SetSessionModeResponse),
    "session/set_config_option": (
        official.SetSessionConfigOptionSelectRequest,
        official.SetSessionConfigOptionResponse,
    ),
    "session/prompt": (official.PromptRequest, official.PromptResponse),
    "session/cancel": (official.CancelNotification, None),
}


class ElicitationResponse(RootModel[official.CreateElicitationResponse]):
    """A client's answer to `elicitation/create` (a union of models in the official package)."""


# Methods the agent calls on the client.
CLIENT_METHODS: dict[str, Models] = {
    "session/update": (official.SessionNotification, None),
    "session/request_permission": (official.RequestPermissionRequest, official.RequestPermissionResponse),
    "fs/read_text_file": (official.ReadTextFileRequest, official.ReadTextFileResponse),
    "fs/write_text_file": (official.WriteTextFileRequest, official.WriteTextFileResponse),
    "terminal/create": (official.CreateTerminalRequest, official.CreateTerminalResponse),
    "terminal/output": (official.TerminalOutputRequest, official.TerminalOutputResponse),
    "terminal/release": (official.ReleaseTerminalRequest, official.ReleaseTerminalResponse),
    "terminal/wait_for_exit": (official.WaitForTerminalExitRequest, official.WaitForTerminalExitResponse),
    "terminal/kill": (official.KillTerminalRequest, official.KillTerminalResponse),
    "$/cancel_request": (official.CancelRequestNotification, None),
    "elicitation/create": (official.CreateFormSessionElicitationRequest, ElicitationResponse),
}
CLIENT_REQUESTS = [method for method in CLIENT_METHODS if method.startswith(("fs/", "terminal/"))]
"""The agent's requests for the client's file system and terminals (the scenarios client-fs and
client-terminal make them; a terminal is killed on a timeout, so `scripted/terminal-timeout`)."""
HANDLED_BY = {"agent": AGENT_METHODS, "client": CLIENT_METHODS}
OTHER: dict[Direction, Direction] = {"agent": "client", "client": "agent"}
UNMODELLED_UPDATES = frozenset({"compaction_update", "compaction_summary_chunk"})
"""Updates the official package has no model for (the schema checks them)."""
PROVOKED = {-32700, -32600, -32601, -32602}
"""Error codes a client frame provoked on purpose (garbage, unknown methods, wrong params): such a
frame is not meant to conform, so only the answer to it is checked."""


# -- the scripted scenarios ---------------------------------------------------------------------

BASH_FAILS = {"command": "echo to stdout; echo to stderr >&2; exit 3", "description": "fails on purpose"}
SCRIPTED: dict[str, tuple[list[dict[str, Any]], Any]] = {
    # name: (input.json steps, script)
    "tools-and-limits": (
        [
            {"op": "initialize"},
            {"op": "newSession"},
            {"op": "prompt", "text": "Run a failing command and an unknown tool."},
            {"op": "prompt", "text": "Write until you are cut off."},
            {"op": "promptExpectError", "text": "Now fail."},
            {"op": "cancel"},
            {
                "op": "raw",
                "line": '{"jsonrpc":"2.0","id":"auth","method":"authenticate","params":{"methodId":"x"}}',
                "expectError": -32602,
            },
            {
                "op": "raw",
                "line": '{"jsonrpc":"2.0","id":"link","method":"session/prompt","params":'
                '{"sessionId":"nope","prompt":[{"type":"resource_link","uri":"file:///a.txt","name":"a.txt"}]}}',
                "expectError": -32002,
            },
        ],
        [
            {
                "reasoning": "Two calls at once.",
                "toolCalls": [
                    {"id": "call_fail", "name": "bash", "arguments": BASH_FAILS},
                    {"id": "call_unknown", "name": "no_such_tool", "arguments": {"x": 1}},
                    {"id": "call_bad_args", "name": "bash", "arguments": {"cmd": "ls"}},
                ],
            },
            {"text": "Both failed; here is why."},
            {"text": "A very long answer that", "finish": "max-tokens"},
            {"throw": {"message": "simulated overload", "code": "OVERLOADED", "status": 529, "text": "Half"}},
        ],
    ),
    "child-tool-call": (
        [{"op": "initialize"}, {"op": "newSession"}, {"op": "prompt", "text": "Delegate an echo."}],
        {
            "s1": [
                {
                    "toolCalls": [
                        {
                            "id": "call_spawn",
                            "name": "subagent",
                            "arguments": {"description": "Echo", "prompt": "Run echo CHILD_OK."},
                        }
                    ]
                },
                {"text": "PARENT_DONE"},
            ],
            "s1/call_spawn": [
                {"toolCalls": [{"id": "call_echo", "name": "bash", "arguments": {"command": "echo CHILD_OK"}}]},
                {"text": "CHILD_OK"},
            ],
        },
    ),
    "terminal-timeout": (
        [{"op": "initialize"}, {"op": "newSession"}, {"op": "prompt", "text": "Wait for it in the terminal."}],
        [
            {"toolCalls": [{"id": "call_sleep", "name": "bash", "arguments": {"command": "echo waiting; sleep 30"}}]},
            {"text": "It timed out."},
        ],
    ),
}
EXTRA_INPUT: dict[str, dict[str, Any]] = {
    "terminal-timeout": {"clientCapabilities": {"terminal": True}},
}
"""More of a scripted scenario's input.json."""
BASH_TIMEOUT = {"terminal-timeout": 0.5}
"""Scripted scenarios whose bash row times out after so many seconds (the kill of a terminal)."""


@dataclass(frozen=True)
class Source:
    name: str
    directory: Path | None
    """A scenario directory (replayed), or None for a scripted scenario (written at run time)."""
    child_sessions: bool | None = None
    """Run as a client with child sessions (None: as the scenario says)."""


AS_CHILD_SESSIONS = ("load-session", "child-model-fails", "grandchild")
"""Scenarios also run as a client with child sessions: a replay, a failed child, a grandchild."""


def sources() -> list[Source]:
    found = []
    for root, prefix in ((UPSTREAM, "upstream"), (FIXTURES, "fixtures")):
        if root.is_dir():
            found += [Source(f"{prefix}/{d.name}", d) for d in sorted(root.iterdir()) if (d / "input.json").is_file()]
    found += [Source(f"fixtures/{name}+child-sessions", FIXTURES / name, True) for name in AS_CHILD_SESSIONS]
    return found + [Source(f"scripted/{name}", None) for name in SCRIPTED]


SOURCES = sources()
NAMES = [s.name for s in SOURCES] + (
    []
    if UPSTREAM.is_dir()
    else [
        pytest.param("upstream", marks=pytest.mark.skip(reason=f"{UPSTREAM} is absent: its scenarios are not checked"))
    ]
)
"""Every source by name; where the TypeScript original's recorded scenarios are absent, one
skipped entry saying so (the rest run in a plain clone)."""


async def run_scripted(name: str, workdir: Path) -> RunResult:
    steps, script = SCRIPTED[name]
    scenario = workdir / "scenario"
    scenario.mkdir()
    (scenario / "input.json").write_text(json.dumps({"steps": steps, **EXTRA_INPUT.get(name, {})}), encoding="utf-8")
    (scenario / "script.json").write_text(json.dumps(script), encoding="utf-8")
    config = RECORD_CONFIG
    if name in BASH_TIMEOUT:
        config = workdir / "cordis.yml"
        bash = f"{{id: bash, name: acp_agent.tools.bash, config: {{timeoutSeconds: {BASH_TIMEOUT[name]}}}}}"
        config.write_text(f"- include: {RECORD_CONFIG.resolve()}\n- {bash}\n", encoding="utf-8")
    run = workdir / "run"
    run.mkdir()
    return await run_scenario(scenario, run, config=config, env={"ACP_AGENT_SCRIPT": str(scenario / "script.json")})


AT_ONCE = 8
"""Servers run side by side."""


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory, scenario_run: ScenarioRuns) -> dict[str, RunResult]:
    """Every source run once, side by side (each is its own server process). The scenario
    directories' runs are the test session's (`tests/runs.py`): the snapshot tests read them too."""
    replayed = {
        source.name: (source.directory, source.child_sessions) for source in SOURCES if source.directory is not None
    }
    scenario_run.prefetch(replayed.values(), AT_ONCE)
    scripted = {
        f"scripted/{name}": partial(run_scripted, name, tmp_path_factory.mktemp(f"scripted-{name}"))
        for name in SCRIPTED
    }
    return {name: scenario_run(*run) for name, run in replayed.items()} | side_by_side(scripted, AT_ONCE)


# -- frames -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checked:
    """One frame and what it must be: `kind` names the object checked, `body` that object."""

    where: str
    kind: Literal["params", "result", "error"]
    method: str | None
    """The method of the request, notification, or of the request a response answers."""
    direction: Direction
    body: Any

    @property
    def notification(self) -> bool:
        return self.kind == "params" and HANDLED_BY[OTHER[self.direction]][self.method or ""][1] is None

    @property
    def unstable(self) -> bool:
        """A frame of child sessions, which the official package has no model for (and the
        stable schema no definition)."""
        if self.kind != "params" or not isinstance(self.body, dict):
            return False
        if self.method == "session/update":
            return self.body["update"].get("sessionUpdate") in UNSTABLE_UPDATES
        return self.method == "initialize" and "subagents" in (self.body.get("clientCapabilities") or {})


UNSTABLE_UPDATES = {"subagent_update", "session_message", "session_message_chunk", "plan_update", "plan_removed"}
UNSTABLE_SESSION_CAPABILITIES = {"title", "systemPrompt"}
"""What `initialize` advertises that the official package has no field for (the unstable schema
has; the e2e test of each method holds it there)."""


def parse(lines: list[str]) -> list[Any]:
    frames = []
    for line in lines:
        try:
            frames.append(json.loads(line))
        except ValueError:
            frames.append(None)  # not JSON (garbage we sent); the stdout side asserts on its own
    return frames


def frames_of(result: RunResult) -> Iterator[Checked]:
    """Every frame of a run, both directions, each paired with the method it belongs to."""
    sides: dict[Direction, list[Any]] = {"agent": parse(result.stdout), "client": parse(result.sent)}
    # Requests by id, per direction: a response from one side answers a request from the other.
    requests: dict[Direction, dict[Any, str]] = {"agent": {}, "client": {}}
    answers: dict[Direction, dict[Any, Any]] = {"agent": {}, "client": {}}
    for direction, frames in sides.items():
        for frame in frames:
            if isinstance(frame, dict) and isinstance(frame.get("method"), str) and "id" in frame:
                requests[direction][_key(frame["id"])] = frame["method"]
            elif isinstance(frame, dict) and "method" not in frame:
                answers[direction][_key(frame.get("id"))] = frame
    for direction, frames in sides.items():
        for number, frame in enumerate(frames, 1):
            where = f"{direction} frame {number}: {json.dumps(frame)[:300]}"
            if direction == "client" and _provoked(frame, answers["agent"], requests["agent"]):
                continue
            assert isinstance(frame, dict), where
            _check_envelope(frame, where)
            if "method" in frame:
                yield Checked(where, "params", frame["method"], direction, frame.get("params"))
            elif "error" in frame:
                method = requests[OTHER[direction]].get(_key(frame["id"]))
                yield Checked(where, "error", method, direction, frame["error"])
            else:
                method = requests[OTHER[direction]].get(_key(frame["id"]))
                assert method is not None, f"{where}: a result answering no request"
                if method.startswith("_"):
                    continue  # an extension method (`_session/steering`): no model, no schema; its e2e test checks it
                yield Checked(where, "result", method, direction, frame["result"])


def _key(request_id: Any) -> Any:
    return json.dumps(request_id)  # `1` and `true` and `1.0` stay apart, lists hash


def _provoked(frame: Any, agent_answers: dict[Any, Any], agent_requests: dict[Any, str]) -> bool:
    """Whether a frame we sent is garbage on purpose: not a request (nor an answer to one of the
    agent's), or refused as malformed."""
    if isinstance(frame, dict) and "method" not in frame and _key(frame.get("id")) in agent_requests:
        return False  # the client's answer to the agent's request (fs, terminal, permission)
    if not (isinstance(frame, dict) and isinstance(frame.get("method"), str)):
        return True
    if frame["method"] not in AGENT_METHODS:
        return True
    answer = agent_answers.get(_key(frame["id"])) if "id" in frame else None
    return answer is not None and (answer.get("error") or {}).get("code") in PROVOKED


def _check_envelope(frame: dict[str, Any], where: str) -> None:
    """JSON-RPC 2.0: exactly the members of a request, notification or response."""
    assert frame.get("jsonrpc") == "2.0", where
    if "method" in frame:
        assert set(frame) <= {"jsonrpc", "method", "params", "id"}, where
        assert isinstance(frame.get("params"), dict), f"{where}: ACP params are an object"
    else:
        assert set(frame) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"}), where
    if "id" in frame:
        request_id = frame["id"]
        assert request_id is None or isinstance(request_id, str) or type(request_id) is int, where
        if type(request_id) is int:
            assert -(2**63) <= request_id < 2**63, where


# -- (a) the official package's models ------------------------------------------------------------


def official_model(item: Checked) -> type[BaseModel]:
    if item.kind == "error":
        return official.Error
    handled_by = HANDLED_BY[OTHER[item.direction]] if item.kind == "params" else HANDLED_BY[item.direction]
    assert item.method in handled_by, f"{item.where}: no model known for {item.method!r} from the {item.direction}"
    params, result = handled_by[item.method]
    model = params if item.kind == "params" else result
    assert model is not None, f"{item.where}: a response to a notification"
    return model


def round_trip(model: type[BaseModel], body: Any) -> Any:
    return model.model_validate(body).model_dump(mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.parametrize("name", NAMES)
def test_every_frame_parses_with_the_official_model_and_round_trips(
    name: str, transcripts: dict[str, RunResult]
) -> None:
    result = transcripts[name]
    checked = list(frames_of(result))
    assert any(item.direction == "agent" for item in checked), f"{name}: the server wrote nothing"
    for item in checked:
        if not _unmodelled(item) and not item.unstable:  # child sessions: (c)
            assert round_trip(official_model(item), item.body) == modelled_part(item), item.where


def _unmodelled(item: Checked) -> bool:
    return item.method == "session/update" and item.body["update"]["sessionUpdate"] in UNMODELLED_UPDATES


def modelled_part(item: Checked) -> Any:
    """What the official model keeps of a frame: all of it, but the client's `session.compaction`
    capability (the schema checks that one) and the unstable session capabilities the agent
    advertises."""
    if item.kind == "result" and item.method == "initialize":
        agent = item.body["agentCapabilities"]
        session = {k: v for k, v in agent["sessionCapabilities"].items() if k not in UNSTABLE_SESSION_CAPABILITIES}
        return {**item.body, "agentCapabilities": {**agent, "sessionCapabilities": session}}
    if item.kind != "params" or item.method != "initialize":
        return item.body
    session = item.body.get("clientCapabilities", {}).get("session")
    if not isinstance(session, dict) or "compaction" not in session:
        return item.body
    capabilities = {
        **item.body["clientCapabilities"],
        "session": {k: v for k, v in session.items() if k != "compaction"},
    }
    return {**item.body, "clientCapabilities": capabilities}


# -- (b) the JSON Schema --------------------------------------------------------------------------


class Schema:
    def __init__(self, path: Path) -> None:
        from jsonschema import Draft202012Validator

        document = json.loads(path.read_text(encoding="utf-8"))
        self._defs: dict[str, Any] = document["$defs"]
        self._validator = Draft202012Validator
        self._cache: dict[str, Any] = {}
        self.by_method: dict[tuple[str, str], str] = {}
        for def_name, definition in self._defs.items():
            method = definition.get("x-method")
            if method is None:
                continue
            for suffix in ("Request", "Notification", "Response"):
                if def_name.endswith(suffix):
                    key = (method, suffix)
                    assert key not in self.by_method, f"two definitions for {key}: {def_name}, {self.by_method[key]}"
                    self.by_method[key] = def_name

    def definition_for(self, item: Checked) -> str:
        if item.kind == "error":
            return "Error"
        suffix = "Response" if item.kind == "result" else "Notification" if item.notification else "Request"
        key = (item.method or "", suffix)
        assert key in self.by_method, f"{item.where}: the schema has no {suffix} for {item.method!r}"
        return self.by_method[key]

    def errors(self, def_name: str, body: Any) -> list[str]:
        if def_name not in self._cache:
            self._cache[def_name] = self._validator({"$defs": self._defs, "$ref": f"#/$defs/{def_name}"})
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}"
            for e in self._cache[def_name].iter_errors(body)
        ]


UNSTABLE_METHODS = {"session/fork"}
"""Methods only the unstable schema defines: their frames are held against it."""


@pytest.fixture(scope="module")
def acp_schema() -> Schema:
    return Schema(ACP_SCHEMA)


@pytest.fixture(scope="module")
def acp_unstable_schema() -> Schema:
    return Schema(ACP_UNSTABLE_SCHEMA)


@pytest.mark.parametrize("name", NAMES)
def test_every_frame_validates_against_the_json_schema(
    name: str, transcripts: dict[str, RunResult], acp_schema: Schema, acp_unstable_schema: Schema
) -> None:
    for item in frames_of(transcripts[name]):
        if item.unstable and item.method == "session/update":
            continue  # no definition in the stable schema: (c)
        schema = acp_unstable_schema if item.method in UNSTABLE_METHODS else acp_schema
        definition = schema.definition_for(item)
        assert schema.errors(definition, item.body) == [], f"{definition}: {item.where}"


# -- (c) frames of child sessions: the unstable JSON Schema ---------------------------------------


def unstable_errors(result: RunResult) -> list[str]:
    """What is wrong with the child-session frames of a run: each against its definition in the
    unstable schema."""
    schema = Schema(ACP_UNSTABLE_SCHEMA)
    return [
        f"{schema.definition_for(item)}: {error}: {item.where}"
        for item in frames_of(result)
        if item.unstable
        for error in schema.errors(schema.definition_for(item), item.body)
    ]


@pytest.mark.parametrize("name", NAMES)
def test_child_session_frames_validate_against_the_unstable_schema(
    name: str, transcripts: dict[str, RunResult]
) -> None:
    assert unstable_errors(transcripts[name]) == []


def test_the_unstable_schema_catches_a_wrong_child_session_frame(transcripts: dict[str, RunResult]) -> None:
    assert sum(item.unstable for item in frames_of(transcripts["fixtures/cancel-one-child"])) == 12  # checked above
    broken = {"sessionId": "s", "update": {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": 3}}}
    assert Schema(ACP_UNSTABLE_SCHEMA).errors("SessionNotification", broken) != []


def test_the_transcripts_cover_every_kind_of_frame_we_produce(transcripts: dict[str, RunResult]) -> None:
    """A guard on the corpus itself: if a scenario stops producing some frame, conformance of that
    frame would silently go unchecked."""
    kinds: set[str] = set()
    for result in transcripts.values():
        for item in frames_of(result):
            if item.method == "session/update":
                update = item.body["update"]
                kinds.add(f"update:{update['sessionUpdate']}:{update.get('status', '')}")
                if "_meta" in update:
                    kinds.add("update:child")
                content = update.get("content")
                if isinstance(content, list) and any(block.get("type") == "terminal" for block in content):
                    kinds.add("update:terminal")
            elif item.kind == "error":
                kinds.add(f"error:{item.body['code']}")
            else:
                kinds.add(f"{item.direction}:{item.kind}:{item.method}")
    expected = {
        "agent:result:initialize",
        "agent:result:session/new",
        "agent:result:session/prompt",
        "agent:result:session/load",
        "agent:result:session/list",
        "agent:result:session/resume",
        "agent:result:session/close",
        "agent:result:session/delete",
        "client:params:initialize",
        "client:params:session/new",
        "client:params:session/prompt",
        "client:params:session/cancel",
        "client:params:session/load",
        "client:params:session/resume",
        "client:params:session/list",
        "client:params:session/close",
        "client:params:session/delete",
        "update:user_message_chunk:",
        "update:agent_message_chunk:",
        "update:agent_thought_chunk:",
        "update:tool_call:in_progress",
        "update:tool_call_update:completed",
        "update:tool_call_update:failed",
        "update:tool_call_update:",  # a running tool's locations and diffs (the file tools)
        "update:tool_call_update:pending",  # awaiting approval
        "update:tool_call_update:in_progress",  # approved
        "agent:params:$/cancel_request",  # a request withdrawn (a terminal wait past its timeout)
        "update:plan:",
        "update:plan_update:",
        "update:plan_removed:",
        "update:current_mode_update:",
        "update:config_option_update:",
        "update:available_commands_update:",
        "agent:result:session/set_mode",
        "agent:result:session/set_config_option",
        "client:params:session/set_mode",
        "client:params:session/set_config_option",
        "agent:params:session/request_permission",
        "agent:params:elicitation/create",  # ask_user's question (fixtures/ask-user)
        "client:result:elicitation/create",
        "client:result:session/request_permission",
        "update:child",
        "update:usage_update:",
        "update:session_info_update:",
        *(f"update:compaction_update:{status}" for status in ("in_progress", "completed", "failed", "cancelled")),
        "update:compaction_summary_chunk:",
        "update:subagent_update:",
        "update:session_message:",
        "update:session_message_chunk:",
        "update:terminal",  # a bash call's terminal embedded in its card
        *(f"agent:params:{method}" for method in CLIENT_REQUESTS),
        *(f"client:result:{method}" for method in CLIENT_REQUESTS),
        *(f"error:{code}" for code in (-32700, -32600, -32601, -32602, -32603, -32002)),
    }
    assert expected <= kinds, sorted(expected - kinds)


# -- the checks themselves ------------------------------------------------------------------------

GOOD_UPDATE = {
    "sessionId": "s",
    "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
}
BROKEN: list[tuple[str, type[BaseModel], str, Any, bool]] = [
    # (what is wrong, official model, schema definition, body, whether the open schema sees it)
    (
        "an unknown member",
        official.SessionNotification,
        "SessionNotification",
        {**GOOD_UPDATE, "update": {**GOOD_UPDATE["update"], "extra": 1}},
        False,
    ),
    (
        "a status outside the enum",
        official.SessionNotification,
        "SessionNotification",
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "status": "done"}},
        True,
    ),
    (
        "an agentInfo the package would salvage to null",
        official.InitializeResponse,
        "InitializeResponse",
        {"protocolVersion": 1, "agentInfo": {"name": "a", "version": 1}},
        True,
    ),
    ("a missing required member", official.PromptResponse, "PromptResponse", {}, True),
    ("a stop reason outside the enum", official.PromptResponse, "PromptResponse", {"stopReason": "done"}, True),
]


@pytest.mark.parametrize(("what", "model", "definition", "body", "schema_sees_it"), BROKEN, ids=[b[0] for b in BROKEN])
def test_the_checks_catch_a_broken_frame(
    what: str, model: type[BaseModel], definition: str, body: Any, schema_sees_it: bool
) -> None:
    """The round trip catches what the package's lenient parse lets through; the schema, being
    open to unknown members, catches only wrong values."""
    assert round_trip(official.SessionNotification, GOOD_UPDATE) == GOOD_UPDATE
    try:
        assert round_trip(model, body) != body
    except ValueError:  # pydantic's ValidationError
        pass
    assert (Schema(ACP_SCHEMA).errors(definition, body) != []) == schema_sees_it
