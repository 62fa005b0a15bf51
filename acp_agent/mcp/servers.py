"""The MCP servers a client hands a session (ACP `mcpServers`): stdio, streamable HTTP and SSE.

The shapes are ACP's (`McpServerStdio`, `McpServerHttp`, `McpServerSse`); the ACP layer validates
each entry of `session/new`, `session/load` and `session/resume` into one of these. Nothing here
imports the MCP SDK.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, ValidationError

from acp_agent.kernel.models import Model


class _Spec(Model):
    # Lenient about fields this agent does not use (`_meta`), strict about the ones it does.
    model_config = ConfigDict(extra="ignore", strict=True)


class NameValue(_Spec):
    """An environment variable (stdio) or an HTTP header (http, sse)."""

    name: str
    value: str


class StdioServer(_Spec):
    """A server this agent starts as a subprocess and talks to over its stdin and stdout."""

    type: Literal["stdio"] = "stdio"
    name: str
    command: str
    args: list[str] = []
    env: list[NameValue] = []


class HttpServer(_Spec):
    """A server reached by URL: `http` (streamable HTTP) or `sse` (the older HTTP+SSE transport)."""

    type: Literal["http", "sse"]
    name: str
    url: str
    headers: list[NameValue] = []


ServerSpec = StdioServer | HttpServer

TRANSPORTS = ("stdio", "http", "sse")


class UnsupportedServer(ValueError):
    """An entry of `mcpServers` this agent cannot connect (its message names the field)."""


def parse_servers(entries: list[dict[str, Any]]) -> list[ServerSpec]:
    """The entries as server specs, in order; `UnsupportedServer` naming the first bad one."""
    specs: list[ServerSpec] = []
    for index, entry in enumerate(entries):
        kind = entry.get("type", "stdio") if isinstance(entry, dict) else None
        if kind not in TRANSPORTS:
            raise UnsupportedServer(f"mcpServers[{index}]: transport {kind!r} is not supported (stdio, http, sse)")
        try:
            specs.append(StdioServer.model_validate(entry) if kind == "stdio" else HttpServer.model_validate(entry))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise UnsupportedServer(f"mcpServers[{index}]: {problems}") from None
    return specs
