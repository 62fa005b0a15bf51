"""A dependency's package registered without running its `__init__`, for a package whose
`__init__` imports far more than the submodules this server uses.

Its submodules then import as usual, on their own. The package's own names (`from pkg import X`,
`pkg.X`, by code of someone else) still work: the first access to one runs the real `__init__`
(a module `__getattr__`, PEP 562), as a plain import would have, once, however many threads ask
at the same moment. A package imported already is left as it is. Each caller relies on its
package's layout and says so where it is pinned.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from typing import Any


def register_without_init(package: str) -> None:
    """Register the installed `package` in `sys.modules` with its `__init__` not run yet."""
    if package in sys.modules:
        return  # imported already (by someone else): nothing to save
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.loader is not None  # a declared dependency, installed
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    lock = threading.RLock()
    state = "registered"

    def complete(name: str) -> Any:
        nonlocal state
        with lock:  # another thread asking meanwhile waits here for the `__init__` to finish
            if state == "registered":
                state = "initializing"
                try:
                    loader.exec_module(module)
                finally:
                    state = "initialized"
                    if vars(module).get("__getattr__") is complete:  # not one the `__init__` defined
                        delattr(module, "__getattr__")
            elif state == "initializing":  # the `__init__` itself, before it defined `name`
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(module, name)

    setattr(module, "__getattr__", complete)  # noqa: B010 - mypy refuses assigning to a module's method
    sys.modules[package] = module
