"""Every text of the MCP package that a model or a user reads."""

from __future__ import annotations

from acp_agent.llm.texts import data_size


def not_connected(server: str, reason: str) -> str:
    """What a call of a tool of a server that went away answers (after `Error: `)."""
    return f"MCP server {server} is not connected ({reason})"


def could_not_start(server: str) -> str:
    """The title of the notice (or the message) saying a server failed."""
    return f"MCP server {server} could not start"


def timed_out(server: str, seconds: float) -> str:
    return f"MCP server {server} did not answer within {seconds:g} s"


def call_timed_out(seconds: float) -> str:
    return f"the MCP tool call did not finish within {seconds:g} s"


CONNECTION_LOST = "the connection to the server was lost"
NEEDS_AUTH = "the server needs authentication (HTTP 401), which this agent does not support yet"
CANCELLED = "cancelled by the user"


def exited(code: int | None) -> str:
    return "the server exited" if code is None else f"the server exited with code {code}"


def image_note(mime_type: str, size: int) -> str:
    """What the model reads in place of an image a tool returned (shown to the user on the card)."""
    return f"[image: {mime_type}, {data_size(size)}, shown to the user]"


def image_not_shown(mime_type: str, size: int) -> str:
    """What the model reads in place of an image too large for the card (it is shown to nobody)."""
    return f"[image: {mime_type}, {data_size(size)}, too large to show]"


def not_shown(what: str, size: int) -> str:
    return f"[{what} of {size} bytes not shown]"


def binary_note(kind: str, mime_type: str, size: int) -> str:
    return f"[{kind}: {mime_type}, {data_size(size)}]"


def resource_note(uri: str, mime_type: str | None) -> str:
    return f"[resource: {uri}" + (f", {mime_type}" if mime_type else "") + "]"


def stderr_tail(lines: list[str]) -> str:
    return "; its last stderr lines: " + " | ".join(lines)


COMMAND_DESCRIPTION = "Show this session's MCP servers: status, tools, last error"


def status_line(name: str, transport: str, state: str, tools: int, error: str | None) -> str:
    """One server of the `/mcp` answer."""
    line = f"- {name} ({transport}): {state}, {tools} tool{'' if tools == 1 else 's'}"
    return line + (f"; last error: {error}" if error else "")


def status_report(lines: list[str]) -> str:
    """The `/mcp` answer: a heading and one line per server, in `mcpServers` order (a session
    without servers does not offer the command)."""
    return "\n".join(["MCP servers of this session:", *lines])
