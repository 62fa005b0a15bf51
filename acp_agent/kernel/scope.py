"""Scoped registrations: everything registered in a scope is undone when the scope is disposed."""

from __future__ import annotations

from collections.abc import Callable

Disposer = Callable[[], None]


def combine(*disposers: Disposer) -> Disposer:
    """One disposer running several as a scope would: last first, all of them even when one fails
    (the first failure is raised), and only once."""
    scope = Scope()
    for disposer in disposers:
        scope.add(disposer)
    return scope.dispose


class ScopeDisposed(RuntimeError):
    """Raised when something is registered in a scope that was already disposed."""


class Scope:
    """An owner of registrations; disposing it runs their disposers newest first.

    A child scope is itself a registration of its parent, so disposing a parent unwinds its
    children along with everything else it owns, and a child disposed early leaves its parent.
    """

    def __init__(self) -> None:
        self._disposers: list[Disposer] = []
        self._release: Disposer | None = None
        self.disposed = False

    def add(self, disposer: Disposer) -> Disposer:
        """Own `disposer`; the returned callable runs it at most once, early, and forgets it."""
        if self.disposed:
            disposer()
            raise ScopeDisposed("cannot register in a disposed scope")
        done = False

        def dispose_once() -> None:
            nonlocal done
            if done:
                return
            done = True
            if dispose_once in self._disposers:
                self._disposers.remove(dispose_once)
            disposer()

        self._disposers.append(dispose_once)
        return dispose_once

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
                self._disposers.pop()()
            except Exception as exc:  # keep unwinding: a half-disposed scope leaks registrations
                failure = failure or exc
        if self._release is not None:
            self._release()
        if failure is not None:
            raise failure
