"""Sign-in and sign-out through the real processes: `acp-agent login` typed into a real terminal (a
pty that is the process's controlling terminal, so Ctrl-C is a real SIGINT), and the server's
`initialize`, `logout` and auth-required answer over stdio. The model endpoint is a fake
OpenAI-compatible server on 127.0.0.1; wire frames are held against the official `acp` models.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import stat
import subprocess
import sys
import termios
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import schema as official

from tests.e2e.test_conformance import Checked, modelled_part
from tests.e2e.test_openai_compat import allow_once, composition, error_of, result_of, text
from tests.e2e.wire import Wire, spawn_server
from tests.paths import ROOT
from tests.unit.llm.openai_server import (
    DONE,
    FakeOpenAI,
    Reply,
    answer,
    chunk,
    fake_openai,
    finish,
    stream,
    tool,
    tools,
)

pytestmark = pytest.mark.anyio

KEY_NAME = "DEEPSEEK_API_KEY"
PROMPT = b"deepseek API key (DEEPSEEK_API_KEY, for "
MODELS_OK = Reply.error(200, {"object": "list", "data": [{"id": "deepseek-chat", "object": "model"}]})
TIMEOUT = 10.0


def _take_the_terminal() -> None:
    """In the child, after `setsid`: make the pty on stdin its controlling terminal, and take
    Ctrl-C and Ctrl-\\ as a shell's foreground job does. The test run may ignore them (a shell
    starts a background job so), and an ignored signal stays ignored across exec: Python would
    then install no handler, and Ctrl-C would do nothing."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


@dataclass(eq=False)
class Terminal:
    """A process on a pty, and everything it showed there."""

    process: subprocess.Popen[bytes]
    master: int
    shown: bytearray = field(default_factory=bytearray)

    async def expect(self, wanted: bytes) -> None:
        with anyio.fail_after(TIMEOUT):
            while wanted not in self.shown:
                if not await self._read():
                    raise AssertionError(f"the terminal closed without {wanted!r}: {bytes(self.shown)!r}")

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    async def exit_status(self) -> int:
        with anyio.move_on_after(TIMEOUT):
            while await self._read():
                pass
            return await anyio.to_thread.run_sync(self.process.wait)
        # What a hang leaves to go on: whether the process ended (something else holds the pty)
        # or not (the keys typed did not reach it), and what the terminal showed.
        status = self.process.poll()
        signals = ""
        if status is None:  # where it waits, and what it does with signals (SIGINT is 0x2 in the masks)
            proc = Path(f"/proc/{self.process.pid}")
            lines = proc.joinpath("status").read_text().splitlines()
            signals = "; ".join(line for line in lines if line.startswith(("State", "Sig", "ShdPnd")))
            signals += f"; wchan {proc.joinpath('wchan').read_text()}"
        raise AssertionError(
            f"the terminal stayed open {TIMEOUT} s; process status {status} {signals}: {bytes(self.shown)!r}"
        )

    async def _read(self) -> bool:
        await anyio.wait_readable(self.master)
        try:
            data = os.read(self.master, 4096)
        except OSError:  # EIO: every end of the pty's other side is closed (the process exited)
            return False
        self.shown += data
        return bool(data)


@asynccontextmanager
async def login(config: Path, env: dict[str, str]) -> AsyncIterator[Terminal]:
    """`python -m acp_agent --config <config> login` in a terminal of its own."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_agent", "--config", str(config), "login"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env={**os.environ, **env},
        start_new_session=True,
        preexec_fn=_take_the_terminal,
    )
    os.close(slave)
    try:
        yield Terminal(process, master)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def official_round_trip(model: type[official.BaseModel], body: Any) -> Any:
    """`body` parsed by the official model and dumped back: the same, so no field was dropped."""
    parsed = model.model_validate(body)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == body
    return parsed


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("config", "sessions", "work")}
    paths["work"].mkdir()
    return paths


def server_env(dirs: dict[str, Path], key: str = "") -> dict[str, str]:
    return {KEY_NAME: key, "ACP_AGENT_CONFIG": str(dirs["config"]), "ACP_AGENT_SESSIONS": str(dirs["sessions"])}


async def test_signing_in_in_a_terminal_checks_and_stores_the_key_without_echo(
    tmp_path: Path, dirs: dict[str, Path]
) -> None:
    async with fake_openai(MODELS_OK) as server:
        async with login(composition(tmp_path, server.url), server_env(dirs)) as terminal:
            await terminal.expect(PROMPT)
            terminal.type(b"sk-typed-in-the-terminal\n")
            status = await terminal.exit_status()
    shown = terminal.shown.decode()
    assert status == 0, shown
    credentials = dirs["config"] / "credentials"
    assert json.loads(credentials.read_text()) == {KEY_NAME: "sk-typed-in-the-terminal"}
    assert (mode(dirs["config"]), mode(credentials)) == (0o700, 0o600)
    assert "sk-typed" not in shown  # never echoed
    assert f"{server.url} accepted the key" in shown and f"stored in {credentials}" in shown
    [check] = server.requests
    assert (check.method, check.path, check.headers["authorization"]) == (
        "GET",
        "/models",
        "Bearer sk-typed-in-the-terminal",
    )


async def test_a_refused_key_or_ctrl_c_exits_non_zero_and_stores_nothing(tmp_path: Path, dirs: dict[str, Path]) -> None:
    async with fake_openai(Reply.error(401, {"error": {"message": "Authentication Fails"}})) as server:
        config = composition(tmp_path, server.url)
        async with login(config, server_env(dirs)) as refused:
            await refused.expect(PROMPT)
            refused.type(b"sk-wrong\n")
            refused_status = await refused.exit_status()
        async with login(config, server_env(dirs)) as interrupted:
            await interrupted.expect(PROMPT)
            interrupted.type(b"sk-half")
            interrupted.type(b"\x03")  # Ctrl-C: the terminal sends SIGINT to the process
            interrupted_status = await interrupted.exit_status()
    assert refused_status == 1
    assert f"{server.url} refused the key (HTTP 401: Authentication Fails); nothing stored" in refused.shown.decode()
    assert interrupted_status == 130
    assert "sign-in interrupted; nothing stored" in interrupted.shown.decode()
    assert len(server.requests) == 1  # the interrupted key was never tried
    assert not dirs["config"].exists()


async def test_a_key_that_cannot_go_in_a_header_is_refused_at_sign_in_without_a_traceback(
    tmp_path: Path, dirs: dict[str, Path]
) -> None:
    async with fake_openai(MODELS_OK) as server:
        async with login(composition(tmp_path, server.url), server_env(dirs)) as terminal:
            await terminal.expect(PROMPT)
            terminal.type("sk-canary-clé\n".encode())
            status = await terminal.exit_status()
    shown = terminal.shown.decode(errors="replace")
    assert status == 1, shown
    assert (
        "acp-agent: the key holds a character an HTTP header cannot carry (a space, a line break, a control or"
        " non-ASCII character); nothing stored"
    ) in shown
    assert "Traceback" not in shown and "canary" not in shown
    assert server.requests == [] and not dirs["config"].exists()


@pytest.mark.parametrize("stored", [False, True], ids=["environment", "stored"])
async def test_a_key_that_cannot_go_in_a_header_is_refused_at_use_and_quoted_nowhere(
    tmp_path: Path, dirs: dict[str, Path], stored: bool
) -> None:
    """A key pasted with its line break: the prompt is refused before any request, and no error,
    log or stderr line holds the key, in any form (raw, repr'ed, stripped, as bytes)."""
    key = "sk-canary-4e9b\r" if not stored else " sk-canary-4e9b\n"
    if stored:
        dirs["config"].mkdir(mode=0o700)
        (dirs["config"] / "credentials").write_text(json.dumps({KEY_NAME: key}))
    where = dirs["config"] / "credentials" if stored else f"the environment variable {KEY_NAME}"
    async with fake_openai(stream(answer("Never."))) as server:
        env = {**server_env(dirs, key="" if stored else key), "ACP_AGENT_LOG": "DEBUG"}
        async with spawn_server(config=composition(tmp_path, server.url), env=env) as wire:
            await initialize(wire, terminal_auth=True)
            created = await wire.request("session/new", {"cwd": str(dirs["work"]), "mcpServers": []})
            refused = await prompt(wire, result_of(created)["sessionId"], "hi")
            await wire.finish()
    assert error_of(refused) == (
        -32000,
        f"Authentication required: the deepseek API key in {where} holds a character an HTTP header cannot"
        " carry (a space, a line break, a control or non-ASCII character): set it again, or sign in"
        " (`acp-agent login`) (the 'login' authentication method)",
    )
    assert server.requests == []
    assert "canary" not in wire.stderr_text and not any("canary" in json.dumps(frame) for frame in wire.received)
    [log] = dirs["sessions"].glob("*/session.jsonl")
    assert b"canary" not in log.read_bytes()


async def initialize(wire: Wire, terminal_auth: bool) -> dict[str, Any]:
    params = {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": terminal_auth}}}
    client = official.InitializeRequest.model_validate(params).client_capabilities
    assert client is not None and client.auth is not None and client.auth.terminal is terminal_auth
    result: dict[str, Any] = result_of(await wire.request("initialize", params))
    checked = Checked("initialize result", "result", "initialize", "agent", result)
    assert official.InitializeResponse.model_validate(result).model_dump(
        mode="json", by_alias=True, exclude_unset=True
    ) == modelled_part(checked)  # all but the unstable capabilities the official models lack
    return result


async def prompt(wire: Wire, session_id: str, words: str) -> dict[str, Any]:
    return await wire.request("session/prompt", {"sessionId": session_id, "prompt": [text(words)]})


async def test_the_terminal_method_logout_and_the_auth_required_answer(tmp_path: Path, dirs: dict[str, Path]) -> None:
    async with fake_openai(stream(answer("Signed in."))) as server:
        (dirs["config"]).mkdir(mode=0o700)
        (dirs["config"] / "credentials").write_text(json.dumps({KEY_NAME: "sk-stored"}))
        async with spawn_server(config=composition(tmp_path, server.url), env=server_env(dirs)) as wire:
            initialized = await initialize(wire, terminal_auth=True)
            created = await wire.request("session/new", {"cwd": str(dirs["work"]), "mcpServers": []})
            session_id = result_of(created)["sessionId"]
            signed_in = await prompt(wire, session_id, "hi")
            logout_request = await wire.start("logout", {})
            logged_out = await wire.response(logout_request)
            refused = await prompt(wire, session_id, "hi again")
            authenticate = await wire.request("authenticate", {"methodId": "login"})
    credentials = dirs["config"] / "credentials"
    [method] = initialized["authMethods"]
    assert method == {
        "type": "terminal",
        "id": "login",
        "name": "Sign in with an API key",
        "description": (
            f"Type your API key for deepseek ({KEY_NAME}) in a terminal; it is checked, then kept in"
            f" {credentials} (an environment variable of the same name wins over it)"
        ),
        "args": ["login"],
    }
    assert [type(m) for m in official.InitializeResponse.model_validate(initialized).auth_methods or []] == [
        official.TerminalAuthMethod
    ]
    assert initialized["agentCapabilities"]["auth"] == {"logout": {}}
    assert result_of(signed_in) == {"stopReason": "end_turn"}
    assert server.requests[0].headers["authorization"] == "Bearer sk-stored"
    official_round_trip(official.LogoutRequest, {})
    assert official_round_trip(official.LogoutResponse, result_of(logged_out)) == official.LogoutResponse()
    assert not credentials.exists()
    assert error_of(refused) == (
        -32000,
        f"Authentication required: no deepseek API key (the model at {server.url} needs one): set the environment"
        f" variable {KEY_NAME}, or sign in (`acp-agent login`) to store one (the 'login' authentication method)",
    )
    assert len(server.requests) == 1  # the refused prompt never reached the model
    [log] = dirs["sessions"].glob("*/session.jsonl")
    types = [json.loads(line)["type"] for line in log.read_text().splitlines()]
    assert types.count("turn/start") == 1 and types.count("user/message") == 1  # nor the session's log
    assert error_of(authenticate) == (
        -32602,
        "Invalid params: methodId 'login' is a terminal sign-in: run the agent's command with the arguments"
        " 'login' in a terminal instead of calling authenticate",
    )


async def test_the_environment_wins_over_the_stored_key(tmp_path: Path, dirs: dict[str, Path]) -> None:
    async with fake_openai(stream(answer("From the environment."))) as server:
        dirs["config"].mkdir(mode=0o700)
        (dirs["config"] / "credentials").write_text(json.dumps({KEY_NAME: "sk-stored"}))
        env = server_env(dirs, key="sk-from-the-environment")
        async with spawn_server(config=composition(tmp_path, server.url), env=env) as wire:
            initialized = await initialize(wire, terminal_auth=False)
            created = await wire.request("session/new", {"cwd": str(dirs["work"]), "mcpServers": []})
            answered = await prompt(wire, result_of(created)["sessionId"], "hi")
    assert initialized["authMethods"] == []  # the client cannot run one
    assert initialized["agentCapabilities"]["auth"] == {"logout": {}}
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer sk-from-the-environment"]


async def test_the_stored_key_reaches_the_endpoint_and_nothing_else(tmp_path: Path, dirs: dict[str, Path]) -> None:
    """The canary: signed in with a recognisable key, a session runs `env` in bash and answers;
    the key is in the credentials file, the Authorization headers, and nowhere else."""
    canary = "sk-canary-5f1c0ffee-do-not-leak"
    arguments = json.dumps({"command": "env", "description": "Show the environment"})
    replies = [
        MODELS_OK,
        stream(
            [
                chunk({"role": "assistant", "content": None}),
                tools(tool(0, arguments, id="call_env", name="bash")),
                finish("tool_calls"),
                DONE,
            ]
        ),
        stream(answer("Done.")),
    ]
    async with fake_openai(*replies) as server:
        config = composition(tmp_path, server.url)
        async with login(config, server_env(dirs)) as terminal:
            await terminal.expect(PROMPT)
            terminal.type(canary.encode() + b"\n")
            assert await terminal.exit_status() == 0
        env = {**server_env(dirs), "ACP_AGENT_LOG": "DEBUG"}
        async with spawn_server(config=config, env=env) as wire:
            wire.answer = allow_once
            await initialize(wire, terminal_auth=True)
            created = await wire.request("session/new", {"cwd": str(dirs["work"]), "mcpServers": []})
            answered = await prompt(wire, result_of(created)["sessionId"], "Show me the environment.")
            await wire.finish()
    assert result_of(answered) == {"stopReason": "end_turn"}
    assert_only_the_endpoint_saw(server, canary, wire)
    assert canary.encode() not in terminal.shown
    assert canary not in wire.stderr_text and "DEBUG" in wire.stderr_text
    assert not any(canary in json.dumps(frame) for frame in wire.received) and wire.garbage == []
    holding = sorted(
        str(path.relative_to(tmp_path))
        for path in tmp_path.rglob("*")
        if path.is_file() and canary.encode() in path.read_bytes()
    )
    assert holding == ["config/credentials"]
    assert len(list(dirs["sessions"].rglob("session.jsonl"))) == 1  # the search did cover the session's log


def assert_only_the_endpoint_saw(server: FakeOpenAI, canary: str, wire: Wire) -> None:
    assert [r.headers["authorization"] for r in server.requests] == [f"Bearer {canary}"] * 3
    model_calls = [r.body for r in server.requests[1:]]
    assert not any(canary in json.dumps(body) for body in model_calls)
    tool_result = model_calls[1]["messages"][-1]
    assert tool_result["role"] == "tool" and "ACP_AGENT_CONFIG=" in tool_result["content"]  # `env` really ran
