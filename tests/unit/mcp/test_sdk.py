"""The MCP SDK's client is imported without the SDK's server side, and the package stays whole for
anyone who asks for its own names; each private name of the SDK the seam relies on is there, and
does what the seam says."""

from __future__ import annotations

import importlib
import inspect
import json
import logging
import subprocess
import sys
from importlib.metadata import version
from typing import Any

import anyio
import httpx
import pytest

from acp_agent.mcp import sdk
from tests.paths import ROOT

CHECK = """
import json, sys
import acp_agent.mcp.connection
skipped = [name for name in ("mcp.server", "mcp.server.fastmcp", "starlette", "uvicorn") if name in sys.modules]
import mcp  # the package's own names: its __init__ runs at the first one
from mcp.client.session import ClientSession
print(json.dumps([skipped, mcp.ClientSession is ClientSession, "mcp.server.fastmcp" in sys.modules]))
"""


def test_the_client_is_imported_without_the_server_side_and_the_package_still_works_whole() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout) == [[], True, True]


def test_the_partial_import_is_for_the_sdk_1_layout() -> None:
    assert version("mcp").split(".")[0] == "1"
    assert '"mcp>=1.29,<2"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sdk.PRIVATE, ids=".".join)
def test_each_private_name_the_seam_relies_on_is_in_the_installed_sdk(name: tuple[str, str]) -> None:
    module, attribute = name
    assert hasattr(importlib.import_module(module), attribute), f"the MCP SDK has no {module}.{attribute} any more"


@pytest.mark.anyio
async def test_the_next_request_id_is_the_one_the_session_sends() -> None:
    to_server, server_reads = anyio.create_memory_object_stream[Any](1)
    server_writes, from_server = anyio.create_memory_object_stream[Any](1)
    with to_server, server_reads, server_writes, from_server:
        session = sdk.ClientSession(from_server, to_server)
        assert hasattr(session, sdk.REQUEST_ID), f"the MCP SDK's ClientSession has no {sdk.REQUEST_ID} any more"
        first = sdk.next_request_id(session)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(session.send_ping)
            sent = await server_reads.receive()
            tasks.cancel_scope.cancel()
    assert sent.message.root.id == first
    assert sdk.next_request_id(session) == first + 1


@pytest.mark.anyio
async def test_the_process_of_a_stdio_server_is_reported_to_its_context_alone() -> None:
    reported: list[int] = []
    params = sdk.stdio.StdioServerParameters(command=sys.executable, args=["-c", "import sys; sys.stdin.read()"])
    with sdk.reporting_process(lambda process: reported.append(process.pid)):
        async with sdk.stdio.stdio_client(params):
            assert len(reported) == 1
    async with sdk.stdio.stdio_client(params):  # outside the context: reported to nobody
        assert len(reported) == 1


def test_the_sdk_still_logs_the_record_the_filter_drops() -> None:
    source = inspect.getsource(sdk.stdio)
    assert f'"{sdk.NOT_PROTOCOL_RECORD}"' in source
    dropped = logging.LogRecord(sdk.stdio.__name__, logging.ERROR, "", 0, sdk.NOT_PROTOCOL_RECORD, None, None)
    kept = logging.LogRecord(sdk.stdio.__name__, logging.ERROR, "", 0, "something else", None, None)
    assert [logging.getLogger(sdk.stdio.__name__).filter(r) for r in (dropped, kept)] == [False, True]


def test_the_http_client_has_the_headers_and_timeout_asked_for() -> None:
    timeout = httpx.Timeout(7, read=None)
    client = sdk.http_client({"X-Test": "1"}, timeout)
    assert client.headers["X-Test"] == "1" and client.timeout == timeout
