"""The JSON-RPC dispatcher (jsonrpcserver 5), imported without what its package imports at start-up.

`jsonrpcserver/__init__.py` imports all of the package, whichever submodule is asked for: its
`main` module (which imports `jsonschema`, to check requests against a JSON schema) and its
`server` module (`http.server`). The connection checks requests itself and uses only the
dispatcher, so before the first import the package is registered without running its
`__init__` (`acp_agent.kernel.packages`); its submodules then import as usual, and the
package's own names (`from jsonrpcserver import Success`, by code of someone else) still work.
This relies on the layout of jsonrpcserver 5 (pyproject.toml pins `>=5,<6`;
`tests/unit/acp/test_jsonrpc.py` checks both halves).
"""

from __future__ import annotations

from typing import Any

from acp_agent.kernel.packages import register_without_init

register_without_init("jsonrpcserver")

from jsonrpcserver.async_dispatcher import dispatch_to_response_pure  # noqa: E402
from jsonrpcserver.exceptions import JsonRpcError  # noqa: E402
from jsonrpcserver.methods import Methods  # noqa: E402
from jsonrpcserver.response import to_serializable  # noqa: E402
from jsonrpcserver.result import Success  # noqa: E402

__all__ = ["JsonRpcError", "Methods", "Success", "dispatch"]


async def dispatch(request: dict[str, Any], text: str, methods: Methods, context: Any) -> dict[str, Any] | None:
    """The response to one request already parsed and checked (`text` is its frame), as a JSON
    object; None for a notification. jsonrpcserver's own deserializer and validator are bypassed."""
    response = await dispatch_to_response_pure(
        deserializer=lambda _: request,
        validator=lambda checked: checked,
        post_process=_serializable,
        context=context,
        methods=methods,
        request=text,
    )
    assert response is None or isinstance(response, dict)  # one request in, one answer out
    return response


def _serializable(response: Any) -> Any:
    # `to_serializable` itself does not match the type the dispatcher declares for `post_process`.
    return to_serializable(response)
