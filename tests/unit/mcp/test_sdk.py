"""The MCP SDK's client is imported without the SDK's server side, and the package stays whole for
anyone who asks for its own names."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

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
