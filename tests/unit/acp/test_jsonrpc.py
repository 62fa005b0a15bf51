"""The dispatcher is imported without what jsonrpcserver's package imports at start-up, and the
package stays whole for anyone who asks for its own names; a request dispatched leaves nothing
behind."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from typing import Any

import pytest

from acp_agent.acp.jsonrpc import Success, dispatch
from tests.memory import left_behind
from tests.paths import ROOT

CHECK = """
import json, sys
import acp_agent.acp.server
skipped = [name for name in ("jsonschema", "http.server", "jsonrpcserver.main") if name in sys.modules]
from jsonrpcserver import Success, dispatch  # the package's own names: its __init__ runs now
from jsonrpcserver.result import Success as result_success
answer = json.loads(dispatch('{"jsonrpc": "2.0", "method": "nothing", "id": 7}'))
print(json.dumps([skipped, "jsonschema" in sys.modules, answer["error"]["code"], Success is result_success]))
"""


def test_the_server_starts_without_jsonschema_and_the_package_still_works_whole() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout) == [[], True, -32601, True]


def test_the_shim_is_for_the_jsonrpcserver_5_layout() -> None:
    assert version("jsonrpcserver").split(".")[0] == "5"
    assert '"jsonrpcserver>=5.0,<6"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_dispatched_requests_leave_nothing_allocated_behind() -> None:
    # Dispatched through `asyncio.gather`, each request left a `result` name, made anew for the
    # look-up of the gathering future's result, in the interpreter's attribute cache: about 9 KB
    # over these 200 requests.
    async def ping(context: Any) -> Any:
        return Success("pong")

    methods, frame = {"ping": ping}, {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert await dispatch(frame, methods, None) == {"jsonrpc": "2.0", "result": "pong", "id": 1}
    assert await dispatch({"jsonrpc": "2.0", "method": "ping"}, methods, None) is None  # a notification
    with left_behind() as left:
        for _ in range(200):
            await dispatch(frame, methods, None)
    assert left.bytes < 1024
