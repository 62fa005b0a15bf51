"""The credential variables of a context, and the environment child processes get without them."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final

from acp_agent.kernel.context import Context, ServiceKey
from acp_agent.kernel.scope import Disposer


class CredentialVariables:
    """The names of the environment variables that hold the server's credentials. A name stays
    hidden as long as one registration of it does."""

    def __init__(self) -> None:
        self._names: Counter[str] = Counter()

    def add(self, names: Iterable[str]) -> Disposer:
        """Hide `names` (empty ones are ignored) until the returned disposer runs."""
        added = [name for name in names if name]
        self._names.update(added)
        held = True

        def dispose() -> None:  # once only, as every disposer
            nonlocal held
            if held:
                held = False
                self._names.subtract(added)
                self._names += Counter()  # drop the names no registration holds any more

        return dispose

    def names(self) -> frozenset[str]:
        return frozenset(self._names)


CREDENTIAL_VARIABLES: Final = ServiceKey[CredentialVariables]("credential_variables")


def hide_variables(ctx: Context, names: Iterable[str]) -> Disposer:
    """Keep the variables `names` out of every child process's environment until the disposer
    runs. The context's set is provided by the first plugin that hides a variable (it lives as
    long as the context), so no composition row is needed for it."""
    found = ctx.find(CREDENTIAL_VARIABLES)
    if found is None:
        found = CredentialVariables()
        ctx.scope.add(ctx.provide(CREDENTIAL_VARIABLES, found))
    return found.add(names)


def credential_names(ctx: Context) -> frozenset[str]:
    """The variables hidden from child processes (none when no plugin hid any)."""
    found = ctx.find(CREDENTIAL_VARIABLES)
    return frozenset() if found is None else found.names()


def child_environment(ctx: Context, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (the server's environment by default) without the context's credential variables:
    the environment to start a child process with."""
    hidden = credential_names(ctx)
    return {name: value for name, value in (os.environ if environ is None else environ).items() if name not in hidden}
