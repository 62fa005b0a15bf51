"""The MCP SDK's client, imported without the SDK's server side: the one place that imports `mcp`.

The SDK's `mcp/__init__.py` imports all of it, whichever submodule is asked for: its server side
too (FastMCP, with Starlette, uvicorn and pydantic-settings), about 40% of the import's time and
of what a session with servers waits for on a server's first connection. So the package is
registered without running its `__init__` (`acp_agent.kernel.packages`) and only the client's
modules are loaded, each by its own name: `import mcp.types as types`, never `from mcp import
...`, which would run that `__init__` (as would any use of the package's own names by code of
someone else, which still works). This relies on the layout of the SDK's 1.x line
(pyproject.toml pins `mcp>=1.29,<2`; `tests/unit/mcp/test_sdk.py` checks both halves).
"""

from __future__ import annotations

from acp_agent.kernel.packages import register_without_init

register_without_init("mcp")

import mcp.client.stdio as stdio  # noqa: E402
import mcp.types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.sse import sse_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402
from mcp.shared.exceptions import McpError  # noqa: E402

__all__ = [
    "ClientSession",
    "McpError",
    "create_mcp_http_client",
    "sse_client",
    "stdio",
    "streamable_http_client",
    "types",
]
