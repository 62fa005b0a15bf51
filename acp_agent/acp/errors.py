"""JSON-RPC error codes ACP uses, constructors of the errors handlers raise, and client errors."""

from __future__ import annotations

from typing import Any

from acp_agent.acp.jsonrpc import JsonRpcError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


def invalid_params(message: str) -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, f"Invalid params: {message}")


def internal_error(message: str) -> JsonRpcError:
    return JsonRpcError(INTERNAL_ERROR, f"Internal error: {message}")


def turn_failed(message: str) -> str:
    """How a failed turn is told: a prompt's error answer, a failed child's end state."""
    return f"Internal error: turn failed: {message}"


def subagent_session(session_id: str) -> JsonRpcError:
    """A mutation sent to a child session, which takes only `session/cancel`."""
    return invalid_params(f"session {session_id} is a subagent session; it accepts only session/cancel")


def session_not_found(session_id: str) -> JsonRpcError:
    return JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: session {session_id!r}")


class ClientError(Exception):
    """The client answered one of the agent's own requests with an error (or never will)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"client error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data
