"""Start-up benchmark: spawn the server, send `initialize` and `session/new` together (as editors
do), and time until both are answered (packaged config, no API key needed). Measured in the same
run against the anchor: a Python script that imports the declared dependencies the server starts
with (anyio, pydantic, httpx, yaml, jsonrpcserver, jsonschema) and then answers each line. Target:
the server within 1.2x of the anchor.

Beside it, for context, a second anchor that also *uses* two of them, as any agent built on them
must: it defines one pydantic model, validates each line with it and answers from an anyio event
loop. Both packages load lazily, so the first anchor pays for neither: `import pydantic` runs only
pydantic's lazy top level (`BaseModel`, its schema machinery and its search of every installed
distribution for pydantic plugins load with the first model), and `import anyio` loads no event
loop backend (`anyio.run` does). Then the server's ten slowest imports (`-X importtime`,
cumulative).

Then the same with one stdio MCP server (the scenarios' FastMCP fixture): from the `session/new`
answer until its tools are ready (a prompt sent at once is answered by the scripted model only
once the first model call stops waiting for the server), beside that server's own start-up alone
(spawned and initialized, its tools listed, by an SDK client already imported).

    python bench/startup.py [--runs 15] [--mcp-runs 5]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmodel import machine

ROOT = Path(__file__).resolve().parents[1]
MCP_SERVER = ROOT / "fixtures" / "mcp" / "server.py"
ANCHOR = """\
import sys
import anyio, pydantic, httpx, yaml, jsonrpcserver, jsonschema
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""
USING_ANCHOR = """\
import sys
import anyio, pydantic, httpx, yaml, jsonrpcserver, jsonschema

class Frame(pydantic.BaseModel):
    jsonrpc: str

async def main():
    for line in sys.stdin:
        Frame.model_validate_json(line)
        sys.stdout.write(line)
        sys.stdout.flush()

anyio.run(main)
"""
TARGET = 1.2


def handshake(cwd: str) -> bytes:
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}},
    ]
    return b"".join(json.dumps(frame).encode() + b"\n" for frame in frames)


def time_once(command: list[str], env: dict[str, str], payload: bytes) -> float:
    """Seconds from spawn until two response lines came back."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin and process.stdout
    process.stdin.write(payload)
    process.stdin.flush()
    answered = 0
    while answered < 2:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{command} exited before answering")
        answered += b'"id"' in line
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait()
    return elapsed


def mcp_ready_once(env: dict[str, str], cwd: str) -> float:
    """Seconds from the `session/new` answer (one stdio MCP server) until the first model call ran,
    which waits for the server's tools."""
    server = {"name": "fixture", "command": sys.executable, "args": [str(MCP_SERVER)], "env": []}
    command = [sys.executable, "-m", "acp_agent", "--config", str(ROOT / "cordis.record.yml")]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin and process.stdout

    def send(frame: dict[str, object]) -> None:
        assert process.stdin
        process.stdin.write(json.dumps(frame).encode() + b"\n")
        process.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": [server]}})
    start = 0.0
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the server exited before answering")
        frame = json.loads(line)
        if frame.get("id") == 2:
            start = time.perf_counter()
            prompt = {"sessionId": frame["result"]["sessionId"], "prompt": [{"type": "text", "text": "hi"}]}
            send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
        elif frame.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk":
            elapsed = time.perf_counter() - start
            break
    process.stdin.close()
    process.wait()
    return elapsed


def server_alone_once() -> float:
    """Seconds to spawn the MCP server, initialize it and list its tools, the SDK already loaded."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> float:
        start = time.perf_counter()
        params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            elapsed = time.perf_counter() - start
        return elapsed

    return anyio.run(run)


def paired_ms(commands: list[list[str]], env: dict[str, str], payload: bytes, runs: int) -> list[float]:
    """The median of each command's runs, the commands alternating (both see the same machine)."""
    for command in commands:
        time_once(command, env, payload)  # warm the file cache
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for command, taken in zip(commands, times, strict=False):
            taken.append(time_once(command, env, payload))
    return [statistics.median(taken) * 1000 for taken in times]


def slowest_imports(command: list[str], env: dict[str, str], payload: bytes, count: int = 10) -> list[tuple[int, str]]:
    """The server's `count` slowest imports, cumulative microseconds, from `-X importtime`."""
    process = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]], input=payload, capture_output=True, env=env
    )
    found = []
    for line in process.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                found.append((int(cumulative), name.rstrip()))
    return sorted(found, reverse=True)[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--mcp-runs", type=int, default=5)
    args = parser.parse_args()
    # An installed package has its bytecode compiled by pip; an editable checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise recompile every module at every start.
    compileall.compile_dir(ROOT / "acp_agent", quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        anchors = []
        for name, text in (("anchor.py", ANCHOR), ("using.py", USING_ANCHOR)):
            script = Path(tmp) / name
            script.write_text(text)
            anchors.append([sys.executable, str(script)])
        env = {**os.environ, "ACP_AGENT_SESSIONS": str(Path(tmp) / "sessions")}
        payload = handshake(tmp)
        server = [sys.executable, "-m", "acp_agent"]
        anchor, using, agent = paired_ms([*anchors, server], env, payload, args.runs)
        imports = slowest_imports(server, env, payload)
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps([{"text": "ready"}]))
        mcp_env = {**env, "ACP_AGENT_SCRIPT": str(script)}
        ready, alone = [], []
        if args.mcp_runs:
            server_alone_once()  # warm the file cache
        for _ in range(args.mcp_runs):  # interleaved, so both see the same machine
            ready.append(mcp_ready_once(mcp_env, tmp))
            alone.append(server_alone_once())
    print(f"machine:                    {machine()}")
    print(f"runs per command:           {args.runs}")
    print(f"anchor (imports, echo):     {anchor:7.1f} ms median")
    print(
        f"anchor using them:          {using:7.1f} ms median "
        f"({using / anchor:.2f}x the first; one model, an event loop)"
    )
    print(f"acp-agent to a session:     {agent:7.1f} ms median")
    print(f"ratio:                      {agent / anchor:7.2f}x (target <= {TARGET}x)")
    print(
        f"ratio to the anchor using:  {agent / using:7.2f}x "
        f"({'within' if agent / using <= TARGET else 'over'} {TARGET}x; context)"
    )
    print("slowest imports (-X importtime, cumulative):")
    for micros, name in imports:
        print(f"  {micros / 1000:7.1f} ms  {name.strip()}")
    met = agent / anchor <= TARGET
    print("start-up target met" if met else "START-UP TARGET MISSED")
    if not args.mcp_runs:
        return 0 if met else 1  # `--mcp-runs 0`: the start-up figure alone
    ready_ms, alone_ms = statistics.median(ready) * 1000, statistics.median(alone) * 1000
    print(f"MCP runs:                   {args.mcp_runs}")
    print(f"MCP server alone:           {alone_ms:7.1f} ms median (spawn, initialize, list tools)")
    print(f"session/new to tools ready: {ready_ms:7.1f} ms median (one stdio server)")
    print(f"ratio:                      {ready_ms / alone_ms:7.1f}x")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
