"""The JSON-RPC dispatcher (jsonrpcserver 5), imported without what its package imports at start-up.

`jsonrpcserver/__init__.py` imports all of the package, whichever submodule is asked for: its
`main` module (which imports `jsonschema`, to check requests against a JSON schema) and its
`server` module (`http.server`). The connection checks requests itself and uses only the
dispatcher, so before the first import the package is registered without running its
`__init__` (`_register_without_init`); its submodules then import as usual, on their own. The
package's own names (`from jsonrpcserver import Success`, by code of someone else) still work:
the first access to one runs the real `__init__` (a module `__getattr__`, PEP 562), as a plain
import would have. This relies on the layout of jsonrpcserver 5 (pyproject.toml pins `>=5,<6`;
`tests/unit/acp/test_jsonrpc.py` checks both halves).
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any


def _register_without_init(package: str) -> None:
    if package in sys.modules:
        return  # imported already (by someone else): nothing to save
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.loader is not None  # a declared dependency, installed
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def complete(name: str) -> Any:
        delattr(module, "__getattr__")
        loader.exec_module(module)
        return getattr(module, name)

    setattr(module, "__getattr__", complete)
    sys.modules[package] = module


_register_without_init("jsonrpcserver")

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
