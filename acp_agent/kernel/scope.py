"""Scoped registrations: everything registered in a scope is undone when the scope is disposed."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any, Generic, TypeVar

from acp_agent.kernel.tables import take

Disposer = Callable[[], None]
K = TypeVar("K")


def combine(*disposers: Disposer) -> Disposer:
    """One disposer running several as a scope would: last first, all of them even when one fails
    (the first failure is raised), and only once."""
    scope = Scope()
    for disposer in disposers:
        scope.add(disposer)
    return scope.dispose


class Removal(Generic[K]):
    """A disposer that takes `key` out of `table` if it is still there (`tables.take`): for the
    entry each open session keeps in a table, a small object rather than a closure and its cells
    (the figures: README.md, Performance)."""

    __slots__ = ("table", "key")

    def __init__(self, table: MutableMapping[K, Any], key: K) -> None:
        self.table = table
        self.key = key

    def __call__(self) -> None:
        take(self.table, self.key)


class ScopeDisposed(RuntimeError):
    """Raised when something is registered in a scope that was already disposed."""


class Scope:
    """An owner of registrations; disposing it runs their disposers newest first.

    A child scope is itself a registration of its parent, so disposing a parent unwinds its
    children along with everything else it owns, and a child disposed early leaves its parent.
    """

    def __init__(self) -> None:
        # An insertion-ordered set: a registration run early leaves it in constant time (the root
        # scope holds every open session's, and a list's removal would make N closes O(N^2)), and
        # `popitem` unwinds newest first.
        self._disposers: dict[_Registration, None] = {}
        self._release: Disposer | None = None
        self.disposed = False

    def add(self, disposer: Disposer) -> Disposer:
        """Own `disposer`; the returned callable runs it at most once, early, and forgets it."""
        if self.disposed:
            disposer()
            raise ScopeDisposed("cannot register in a disposed scope")
        registration = _Registration(self, disposer)
        self._disposers[registration] = None
        return registration

    def child(self) -> Scope:
        """A new scope disposed together with this one (or earlier, on its own)."""
        child = Scope()
        child._release = self.add(child.dispose)
        return child

    def dispose(self) -> None:
        """Run every disposer, newest first, even when one fails (the first failure is raised)."""
        if self.disposed:
            return
        self.disposed = True
        failure: BaseException | None = None
        while self._disposers:
            try:
                self._disposers.popitem()[0]()
            except Exception as exc:  # keep unwinding: a half-disposed scope leaks registrations
                failure = failure or exc
        if self._release is not None:
            self._release()
            self._release = None
        if failure is not None:
            raise failure


class _Registration:
    """A disposer owned by a scope, run at most once (early, or by the scope) and then forgotten.

    It lets go of its scope and its disposer when it runs, and nothing refers back to it: what the
    disposer reached (a closed session's objects) is freed by reference counting then, instead of
    waiting, pinned in a reference cycle, for a full collection of the cyclic collector.
    """

    __slots__ = ("_scope", "_disposer")

    def __init__(self, scope: Scope, disposer: Disposer) -> None:
        self._scope: Scope | None = scope
        self._disposer: Disposer | None = disposer

    def __call__(self) -> None:
        scope, disposer = self._scope, self._disposer
        if scope is None or disposer is None:
            return
        self._scope = self._disposer = None
        scope._disposers.pop(self, None)
        disposer()
