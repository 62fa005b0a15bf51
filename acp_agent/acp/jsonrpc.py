"""The JSON-RPC dispatcher (jsonrpcserver 5), imported without what its package imports at start-up.

`jsonrpcserver/__init__.py` imports all of the package, whichever submodule is asked for: its
`main` module (which imports `jsonschema`, to check requests against a JSON schema) and its
`server` module (`http.server`). The connection checks requests itself and uses only the
dispatcher, so before the first import the package is registered without running its
`__init__` (`acp_agent.kernel.packages`); its submodules then import as usual, and the
package's own names (`from jsonrpcserver import Success`, by code of someone else) still work.
This relies on the layout of jsonrpcserver 5 (pyproject.toml pins `>=5,<6`;
`tests/unit/acp/test_jsonrpc.py` checks both halves).

A request reaches the connection already parsed, checked and alone (a batch's items come one by
one), so it is dispatched by the dispatcher's step for one request, not through its entry point,
which gathers the requests of a batch with `asyncio.gather`: that ran each request in a second
task of its own, under a future whose result CPython looks up by a name made anew each time
(kept by the interpreter's attribute cache, so a few hundred of them outlived the requests that
made them, scattered over the allocator's arenas).
"""

from __future__ import annotations

from typing import Any

from acp_agent.kernel.packages import register_without_init

register_without_init("jsonrpcserver")

from jsonrpcserver.async_dispatcher import dispatch_request  # noqa: E402
from jsonrpcserver.dispatcher import create_request, not_notification, to_response  # noqa: E402
from jsonrpcserver.exceptions import JsonRpcError  # noqa: E402
from jsonrpcserver.methods import Methods  # noqa: E402
from jsonrpcserver.response import to_serializable  # noqa: E402
from jsonrpcserver.result import Success  # noqa: E402

__all__ = ["JsonRpcError", "Methods", "Success", "dispatch"]


async def dispatch(request: dict[str, Any], methods: Methods, context: Any) -> dict[str, Any] | None:
    """The response to one request already parsed and checked, as a JSON object; None for a
    notification. jsonrpcserver's own deserializer and validator are bypassed."""
    dispatched = await dispatch_request(methods, context, create_request(request))
    if not not_notification(dispatched):
        return None
    response = to_serializable(to_response(*dispatched))
    assert isinstance(response, dict)  # one request in, one answer out
    return response
