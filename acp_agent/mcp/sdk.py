"""The MCP SDK's client, and everything this package relies on of the SDK's internals.

The one place that imports `mcp`. The SDK's `mcp/__init__.py` imports all of it, whichever
submodule is asked for: its server side too (FastMCP, with Starlette, uvicorn and
pydantic-settings), about 40% of the import's time and of what a session with servers waits for
on a server's first connection. So the package is registered without running its `__init__`
(`acp_agent.kernel.packages`) and only the client's modules are loaded, each by its own name:
`import mcp.types as types`, never `from mcp import ...`, which would run that `__init__` (as
would any use of the package's own names by code of someone else, which still works). This
relies on the layout of the SDK's 1.x line (pyproject.toml pins `mcp>=1.29,<2`).

The SDK's private names (`PRIVATE`) and the one log text it relies on (`NOT_PROTOCOL_RECORD`)
are used here alone, behind the named functions below, and only when they are called: importing
this module touches none of them, so a release that renames one fails the check of
`tests/unit/mcp/test_sdk.py` that names it, and the features built on it, and nothing else.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import httpx
from anyio.abc import Process

from acp_agent.kernel.packages import register_without_init

register_without_init("mcp")

import mcp.client.stdio as stdio  # noqa: E402
import mcp.types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.sse import sse_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import McpError  # noqa: E402

__all__ = [
    "NOT_PROTOCOL_RECORD",
    "PRIVATE",
    "REQUEST_ID",
    "ClientSession",
    "McpError",
    "http_client",
    "next_request_id",
    "reporting_process",
    "sse_client",
    "stdio",
    "streamable_http_client",
    "types",
]

PROCESS_FACTORY: Final = ("mcp.client.stdio", "_create_platform_compatible_process")
"""The coroutine function that starts a stdio server's process (the client keeps the process to
itself; `reporting_process` needs it)."""
HTTP_CLIENT_FACTORY: Final = ("mcp.shared._httpx_utils", "create_mcp_http_client")
"""The httpx client with the SDK's own timeouts and settings, from a private module."""
REQUEST_ID: Final = "_request_id"
"""The attribute of a `ClientSession` holding the id of its next request."""
PRIVATE: Final = (PROCESS_FACTORY, HTTP_CLIENT_FACTORY)
"""The private names of the SDK's modules used, as (module, name); `REQUEST_ID` besides."""
NOT_PROTOCOL_RECORD: Final = "Failed to parse JSONRPC message from server"
"""What the SDK logs, with a traceback, for each stdout line of a stdio server that is not JSON-RPC."""


def _private(name: tuple[str, str]) -> Any:
    module, attribute = name
    return getattr(importlib.import_module(module), attribute)


def http_client(headers: dict[str, str], timeout: httpx.Timeout) -> httpx.AsyncClient:
    """An HTTP client for a streamable HTTP server, made as the SDK makes its own."""
    factory: Callable[..., httpx.AsyncClient] = _private(HTTP_CLIENT_FACTORY)
    return factory(headers=headers, timeout=timeout)


def next_request_id(session: ClientSession) -> int:
    """The id `session`'s next request will use: the SDK numbers requests and does not tell a
    request's id to its caller, who needs it to cancel the request (`notifications/cancelled`)."""
    request_id: int = getattr(session, REQUEST_ID)
    return request_id


_STARTED: contextvars.ContextVar[Callable[[Process], None] | None] = contextvars.ContextVar(
    "acp_agent_mcp_started", default=None
)


@contextmanager
def reporting_process(report: Callable[[Process], None]) -> Iterator[None]:
    """Hand `report` the process the SDK starts for a stdio server in this context (this task, and
    the tasks it starts), as soon as it is started: the SDK keeps it to itself, and the connection
    needs it to end the server's whole process group and to notice when the server exits."""
    _hook_process_factory()
    token = _STARTED.set(report)
    try:
        yield
    finally:
        _STARTED.reset(token)


@functools.cache
def _hook_process_factory() -> None:
    """Wrap the SDK's process factory, once: what it starts goes to the reporter of its context."""
    module, name = PROCESS_FACTORY
    create: Callable[..., Awaitable[Process]] = _private(PROCESS_FACTORY)

    async def create_and_report(*args: Any, **kwargs: Any) -> Process:
        process = await create(*args, **kwargs)
        report = _STARTED.get()
        if report is not None:
            report(process)
        return process

    setattr(importlib.import_module(module), name, create_and_report)


class _NotProtocolFilter(logging.Filter):
    """Drops the SDK's record of each stdout line that is not JSON-RPC: a server that prints to
    stdout would flood stderr with tracebacks. The connection counts them instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != NOT_PROTOCOL_RECORD


logging.getLogger(stdio.__name__).addFilter(_NotProtocolFilter())
