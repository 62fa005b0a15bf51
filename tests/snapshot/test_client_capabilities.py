"""The harness client's fs and terminals (`client_fs.py`, `client_terminal.py`) and how its
`Client` answers the agent's requests for them: served when advertised, a failure when not."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.snapshot.client import Client
from acp_agent.snapshot.client_fs import FileServer, RequestFailed
from acp_agent.snapshot.client_terminal import Terminals, open_terminals
from acp_agent.snapshot.scenario import ClientCapabilities, FileSystemCapabilities

pytestmark = pytest.mark.anyio

# -- fs ------------------------------------------------------------------------------------------


def read(server: FileServer, path: Path | str, **window: int) -> Any:
    return server.read({"sessionId": "s", "path": str(path), **window})


def failure(call: Any, *args: Any) -> tuple[int, str]:
    with pytest.raises(RequestFailed) as caught:
        call(*args)
    return caught.value.code, caught.value.message


def test_reads_serve_the_files_of_the_cwd_honouring_line_and_limit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\nfour")
    server = FileServer(tmp_path)
    assert read(server, tmp_path / "a.txt") == {"content": "one\ntwo\nthree\nfour"}
    assert read(server, tmp_path / "a.txt", line=2, limit=2) == {"content": "two\nthree\n"}
    assert read(server, tmp_path / "a.txt", line=3) == {"content": "three\nfour"}
    assert read(server, tmp_path / "a.txt", limit=1) == {"content": "one\n"}
    assert read(server, tmp_path / "a.txt", line=9) == {"content": ""}
    (tmp_path / "b.txt").write_text("x\n")
    assert read(server, tmp_path / "b.txt", line=1, limit=5) == {"content": "x\n"}


def test_read_errors_are_what_an_editor_answers(tmp_path: Path) -> None:
    server = FileServer(tmp_path)
    (tmp_path / "bin").write_bytes(b"\xff")
    (tmp_path / "dir").mkdir()
    assert failure(read, server, tmp_path / "gone") == (-32002, f"Resource not found: {tmp_path}/gone")
    assert failure(read, server, "relative.txt") == (
        -32602,
        "Invalid params: path must be absolute, got 'relative.txt'",
    )
    assert failure(read, server, "/etc/passwd") == (-32602, "Invalid params: /etc/passwd is outside the workspace")
    assert failure(read, server, tmp_path / "bin")[0] == -32603
    assert failure(read, server, tmp_path / "dir")[0] == -32603
    assert failure(server.read, {"path": 3}) == (-32602, "Invalid params: Field required")


def test_writes_create_parent_directories_and_keep_line_ends(tmp_path: Path) -> None:
    server = FileServer(tmp_path)
    assert server.write({"sessionId": "s", "path": str(tmp_path / "d" / "e.txt"), "content": "a\r\nb"}) == {}
    assert (tmp_path / "d" / "e.txt").read_bytes() == b"a\r\nb"
    (tmp_path / "dir").mkdir()
    code, message = failure(server.write, {"sessionId": "s", "path": str(tmp_path / "dir"), "content": ""})
    assert code == -32603 and message.startswith(f"Internal error: cannot write {tmp_path}/dir")


# -- terminals -----------------------------------------------------------------------------------


async def create(terminals: Terminals, command: str, **extra: Any) -> str:
    params = {"sessionId": "s", "command": "bash", "args": ["-c", command], **extra}
    return str((await terminals.handle("terminal/create", params))["terminalId"])


async def ask(terminals: Terminals, method: str, terminal_id: str) -> Any:
    return await terminals.handle(method, {"sessionId": "s", "terminalId": terminal_id})


async def test_a_terminal_runs_the_command_in_the_cwd_and_reports_its_exit(tmp_path: Path) -> None:
    async with open_terminals(tmp_path) as terminals:
        terminal = await create(terminals, "echo out; echo err >&2; echo $GREETING; pwd; exit 4",
                                env=[{"name": "GREETING", "value": "hi"}])  # fmt: skip
        assert await ask(terminals, "terminal/wait_for_exit", terminal) == {"exitCode": 4}
        assert await ask(terminals, "terminal/output", terminal) == {
            "output": f"out\nerr\nhi\n{tmp_path}\n", "truncated": False, "exitStatus": {"exitCode": 4}
        }  # fmt: skip
        assert await ask(terminals, "terminal/release", terminal) == {}
        assert terminals.unreleased() == []
        with pytest.raises(RequestFailed, match="no terminal"):
            await ask(terminals, "terminal/output", terminal)


async def test_kill_ends_the_whole_group_and_the_status_names_the_signal(tmp_path: Path) -> None:
    async with open_terminals(tmp_path) as terminals:
        terminal = await create(terminals, "echo started; sleep 30 & sleep 30", cwd=str(tmp_path))
        running = await ask(terminals, "terminal/output", terminal)
        assert "exitStatus" not in running
        assert await ask(terminals, "terminal/kill", terminal) == {}
        assert await ask(terminals, "terminal/wait_for_exit", terminal) == {"signal": "SIGKILL"}
        assert await ask(terminals, "terminal/kill", terminal) == {}  # after the exit: nothing to do
        await ask(terminals, "terminal/release", terminal)


async def test_output_past_the_limit_loses_its_beginning_at_a_character_boundary(tmp_path: Path) -> None:
    async with open_terminals(tmp_path) as terminals:
        terminal = await create(terminals, "printf 'aé€z'", outputByteLimit=4)  # 1 + 2 + 3 + 1 bytes
        await ask(terminals, "terminal/wait_for_exit", terminal)
        output = await ask(terminals, "terminal/output", terminal)
        assert (output["output"], output["truncated"]) == ("€z", True)  # 4 bytes, then é's tail dropped
        await ask(terminals, "terminal/release", terminal)
        terminal = await create(terminals, "printf 'é'", outputByteLimit=1)  # no whole character fits
        await ask(terminals, "terminal/wait_for_exit", terminal)
        assert (await ask(terminals, "terminal/output", terminal))["output"] == ""
        await ask(terminals, "terminal/release", terminal)


async def test_unknown_methods_bad_params_and_a_command_that_cannot_start(tmp_path: Path) -> None:
    async with open_terminals(tmp_path) as terminals:
        with pytest.raises(RequestFailed, match="Method not found: terminal/resize"):
            await ask(terminals, "terminal/resize", "x")
        with pytest.raises(RequestFailed, match="Invalid params"):
            await terminals.handle("terminal/create", {"sessionId": "s"})
        with pytest.raises(RequestFailed, match="cannot run '/no/such/shell'"):
            await terminals.handle("terminal/create", {"sessionId": "s", "command": "/no/such/shell"})


async def test_leaving_kills_what_still_runs_and_names_what_was_never_released(tmp_path: Path) -> None:
    async with open_terminals(tmp_path) as terminals:
        terminal = await create(terminals, "echo $$; sleep 30")
        with anyio.fail_after(5):
            while not (await ask(terminals, "terminal/output", terminal))["output"]:
                await anyio.sleep(0.01)
        pid = int((await ask(terminals, "terminal/output", terminal))["output"])
        assert terminals.unreleased() == [f"terminal {terminal} was never released"]
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


# -- the client ----------------------------------------------------------------------------------


async def answers_to(
    requests: list[dict[str, Any]], capabilities: ClientCapabilities, cwd: Path
) -> tuple[Client, list[Any]]:
    """What a client with these capabilities answers the agent's `requests` (all sent at once)."""
    written, into = anyio.create_memory_object_stream[bytes](100)
    stdout_in, stdout = anyio.create_memory_object_stream[bytes](100)
    async with open_terminals(cwd) as terminals:
        client = Client(written, [], capabilities=capabilities, files=FileServer(cwd), terminals=terminals)  # type: ignore[arg-type]
        for index, request in enumerate(requests):
            await stdout_in.send(json.dumps({"jsonrpc": "2.0", "id": index, **request}).encode() + b"\n")
        stdout_in.close()
        await client.read(stdout)  # type: ignore[arg-type]
        with anyio.fail_after(5):
            while len(client.sent) < len(requests):
                await anyio.sleep(0.01)
    return client, sorted((json.loads(line) for line in client.sent), key=lambda frame: frame["id"])


async def test_the_client_serves_what_it_advertised_and_reports_what_it_did_not(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("text")
    fs_only = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True))
    client, replies = await answers_to(
        [
            {"method": "fs/read_text_file", "params": {"sessionId": "s", "path": str(tmp_path / "a.txt")}},
            {"method": "fs/read_text_file", "params": {"sessionId": "s", "path": "relative"}},
            {
                "method": "fs/write_text_file",
                "params": {"sessionId": "s", "path": str(tmp_path / "a.txt"), "content": ""},
            },
            {"method": "terminal/create", "params": {"sessionId": "s", "command": "true"}},
            {"method": "x/other", "params": {}},
        ],
        fs_only,
        tmp_path,
    )
    assert [reply.get("result", reply.get("error", {}).get("code")) for reply in replies] == [
        {"content": "text"}, -32602, -32601, -32601, -32601
    ]  # fmt: skip
    assert client.failures == [
        "the agent called fs/write_text_file, which the client did not advertise",
        "the agent called terminal/create, which the client did not advertise",
    ]
    assert (tmp_path / "a.txt").read_text() == "text"


async def test_a_terminal_wait_does_not_hold_up_the_reading(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("text")
    written, into = anyio.create_memory_object_stream[bytes](100)
    stdout_in, stdout = anyio.create_memory_object_stream[bytes](100)
    everything = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True), terminal=True)
    async with open_terminals(tmp_path) as terminals, anyio.create_task_group() as tasks:
        client = Client(written, [], capabilities=everything, files=FileServer(tmp_path), terminals=terminals)  # type: ignore[arg-type]
        tasks.start_soon(client.read, stdout)
        terminal = await create(terminals, "sleep 30")
        ids = {"sessionId": "s", "terminalId": terminal}
        for frame in (
            {"id": 0, "method": "terminal/wait_for_exit", "params": ids},
            {"id": 1, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": str(tmp_path / "a.txt")}},
        ):
            await stdout_in.send(json.dumps({"jsonrpc": "2.0", **frame}).encode() + b"\n")
        with anyio.fail_after(5):
            assert json.loads(await into.receive())["id"] == 1  # answered while the command still runs
            await ask(terminals, "terminal/kill", terminal)
            assert json.loads(await into.receive()) == {"jsonrpc": "2.0", "id": 0, "result": {"signal": "SIGKILL"}}
        await ask(terminals, "terminal/release", terminal)
        stdout_in.close()
