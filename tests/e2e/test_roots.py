"""A session's additional directories through the real server: the file and search tools reach
them by absolute path and nothing else beside the cwd; a confined command may write there and not
elsewhere; the log records each set, and a load activates the set its request names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from acp.schema import ListSessionsResponse

from tests.e2e.test_sandbox import Place, bash, results, text
from tests.e2e.wire import RECORD_CONFIG, Wire, spawn_server
from tests.paths import ACP_SCHEMA

pytestmark = pytest.mark.anyio


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


async def open_session(wire: Wire, place: Place, extra: list[Path], method: str = "session/new", **more: Any) -> str:
    params = {"cwd": str(place.cwd), "mcpServers": [], "additionalDirectories": [str(p) for p in extra], **more}
    answer = await wire.request(method, params)
    assert "result" in answer, answer
    session_id = str(answer["result"].get("sessionId", more.get("sessionId")))
    assert "result" in await wire.request("session/set_mode", {"sessionId": session_id, "modeId": "auto"})
    return session_id


async def go(wire: Wire, session_id: str) -> dict[str, str]:
    answer = await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text("Go.")]}, timeout=60)
    assert answer["result"] == {"stopReason": "end_turn"}, answer
    return results(wire)


async def listed_roots(wire: Wire) -> dict[str, list[str] | None]:
    """What `session/list` reports of each session's additional roots (None: the field left out),
    its answer held against the stable schema and the official package's model."""
    answer = await wire.request("session/list", {})
    result = answer["result"]
    defs = json.loads(ACP_SCHEMA.read_text(encoding="utf-8"))["$defs"]
    jsonschema.Draft202012Validator({"$ref": "#/$defs/ListSessionsResponse", "$defs": defs}).validate(result)
    ListSessionsResponse.model_validate(result)
    return {info["sessionId"]: info.get("additionalDirectories") for info in result["sessions"]}


def roots_logged(place: Place, session_id: str) -> list[list[str]]:
    lines = (place.root / "sessions" / session_id / "session.jsonl").read_text().splitlines()
    return [event["data"]["directories"] for event in map(json.loads, lines[1:]) if event["type"] == "session/roots"]


async def test_the_tools_reach_an_additional_directory_and_a_load_activates_the_set_it_names(tmp_path: Path) -> None:
    place = Place(tmp_path)
    extra = tmp_path / "extra"
    (extra / "docs").mkdir(parents=True)
    (extra / "docs" / "notes.md").write_text("needle in the extra root\n")
    script = [
        {
            "toolCalls": [
                call("write", "write_file", path=f"{extra}/new.txt", content="written\n"),
                call("outside", "write_file", path=f"{place.outside}/new.txt", content="no\n"),
                call("read", "read_file", path=f"{extra}/docs/notes.md"),
                call("grep", "grep", pattern="needle", path=str(extra)),
                call("glob", "glob", pattern="**/*.md", path=str(extra)),
            ]
        },
        {"text": "Done."},
        {"toolCalls": [call("again", "write_file", path=f"{extra}/again.txt", content="no\n")]},
        {"text": "Refused."},
    ]
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = await open_session(wire, place, [extra, extra / "docs" / ".."])  # one root, said twice
        shown = await go(wire, session_id)
        await wire.request("session/close", {"sessionId": session_id})
        await open_session(wire, place, [], "session/load", sessionId=session_id)  # none named: the cwd alone
        shown.update(await go(wire, session_id))
        fork = await open_session(wire, place, [extra], "session/fork", sessionId=session_id)
    assert (extra / "new.txt").read_text() == "written\n"
    assert shown["write"] == f"Created {extra}/new.txt (1 line)."
    assert shown["outside"] == f"Error: {place.outside}/new.txt is outside the session's roots: {place.cwd}, {extra}"
    assert place.untouched()
    assert "needle in the extra root" in shown["read"]
    assert f"{extra}/docs/notes.md:1:needle in the extra root" in shown["grep"]
    assert shown["glob"] == f"{extra}/docs/notes.md"
    assert shown["again"] == f"Error: {extra}/again.txt is outside the working directory {place.cwd}"  # the cwd alone
    assert not (extra / "again.txt").exists()
    assert roots_logged(place, session_id) == [[str(extra)], []]
    assert roots_logged(place, fork)[-1] == [str(extra)]  # the fork's own set, after the inherited ones


async def test_a_confined_command_writes_in_an_additional_directory_and_nowhere_else(tmp_path: Path) -> None:
    """Under Landlock, which the suite's kernel offers (both backends read one policy: the sandbox
    tests try each with the same writable set)."""
    place = Place(tmp_path)
    extra = tmp_path / "extra"
    extra.mkdir()
    script = [
        {"toolCalls": [bash("in", f"echo x > {extra}/made"), bash("out", f"echo x > {place.outside}/made")]},
        {"text": "Done."},
    ]
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script, ACP_AGENT_SANDBOX="landlock")) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        session_id = await open_session(wire, place, [extra])
        shown = await go(wire, session_id)
    assert (extra / "made").read_text() == "x\n"
    assert place.untouched()
    assert f"[sandbox: writing {place.outside}/made is not allowed in workspace-write mode" in shown["out"]


async def test_session_list_reports_the_roots_each_sessions_log_holds_last(tmp_path: Path) -> None:
    place = Place(tmp_path)
    lib, docs = tmp_path / "lib", tmp_path / "docs"
    lib.mkdir()
    docs.mkdir()
    script = {"s1": [{"text": "One."}], "s2": [{"text": "Two."}]}
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:
        await wire.request("initialize", {"protocolVersion": 1})
        rooted = await open_session(wire, place, [docs, lib / ".." / "lib"])  # in the client's order, resolved
        await go(wire, rooted)
        plain = await open_session(wire, place, [])
        await go(wire, plain)
        first = await listed_roots(wire)
        await wire.request("session/close", {"sessionId": rooted})
        await open_session(wire, place, [lib], "session/load", sessionId=rooted)
        loaded = await listed_roots(wire)
        await wire.request("session/close", {"sessionId": rooted})
        await open_session(wire, place, [], "session/load", sessionId=rooted)
        emptied = await listed_roots(wire)
    assert first == {rooted: [str(docs), str(lib)], plain: None}  # none: left out
    assert loaded == {rooted: [str(lib)], plain: None}  # a load that names another set: listed at once
    assert emptied == {rooted: None, plain: None}
    async with spawn_server(config=RECORD_CONFIG, env=place.env(script)) as wire:  # from the index on disk
        await wire.request("initialize", {"protocolVersion": 1})
        assert await listed_roots(wire) == emptied
