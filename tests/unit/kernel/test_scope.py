"""Scope: registrations unwind newest first, once, with child scopes and failing disposers."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import pytest

from acp_agent.kernel import Scope, ScopeDisposed, combine
from acp_agent.kernel.scope import Removal


def recorder(log: list[str], label: str) -> Callable[[], None]:
    return lambda: log.append(label)


def test_dispose_unwinds_in_reverse_order() -> None:
    log: list[str] = []
    scope = Scope()
    for label in ("a", "b", "c"):
        scope.add(recorder(log, label))
    scope.dispose()
    assert log == ["c", "b", "a"]
    assert scope.disposed


def test_dispose_is_idempotent() -> None:
    log: list[str] = []
    scope = Scope()
    scope.add(recorder(log, "a"))
    scope.dispose()
    scope.dispose()
    assert log == ["a"]


def test_early_disposal_runs_once_and_leaves_the_scope() -> None:
    log: list[str] = []
    scope = Scope()
    scope.add(recorder(log, "a"))
    early = scope.add(recorder(log, "b"))
    scope.add(recorder(log, "c"))
    early()
    early()
    assert log == ["b"]
    scope.dispose()
    assert log == ["b", "c", "a"]


def test_the_returned_disposer_is_inert_after_the_scope_ran_it() -> None:
    log: list[str] = []
    scope = Scope()
    disposer = scope.add(recorder(log, "a"))
    scope.dispose()
    disposer()
    assert log == ["a"]


def test_registering_in_a_disposed_scope_undoes_at_once_and_raises() -> None:
    log: list[str] = []
    scope = Scope()
    scope.dispose()
    with pytest.raises(ScopeDisposed, match="^cannot register in a disposed scope$"):
        scope.add(recorder(log, "late"))
    assert log == ["late"]


def test_a_child_is_disposed_with_its_parent_in_registration_order() -> None:
    log: list[str] = []
    parent = Scope()
    parent.add(recorder(log, "parent-1"))
    child = parent.child()
    child.add(recorder(log, "child-1"))
    child.add(recorder(log, "child-2"))
    parent.add(recorder(log, "parent-2"))
    parent.dispose()
    assert log == ["parent-2", "child-2", "child-1", "parent-1"]
    assert child.disposed


def test_a_child_disposed_early_leaves_its_parent() -> None:
    log: list[str] = []
    parent = Scope()
    parent.add(recorder(log, "parent"))
    child = parent.child()
    child.add(recorder(log, "child"))
    child.dispose()
    assert log == ["child"]
    assert not parent.disposed
    released = weakref.ref(child)
    del child
    gc.collect()
    assert released() is None  # the parent no longer holds the child
    parent.dispose()
    assert log == ["child", "parent"]


def test_grandchildren_unwind_with_the_root() -> None:
    log: list[str] = []
    root = Scope()
    grandchild = root.child().child()
    grandchild.add(recorder(log, "grandchild"))
    root.dispose()
    assert log == ["grandchild"]
    assert grandchild.disposed


def test_a_child_of_a_disposed_scope_cannot_be_made() -> None:
    parent = Scope()
    parent.dispose()
    with pytest.raises(ScopeDisposed):
        parent.child()


def test_a_failing_disposer_does_not_stop_the_unwinding_and_is_raised() -> None:
    log: list[str] = []
    scope = Scope()
    scope.add(recorder(log, "a"))

    def fail() -> None:
        log.append("fail")
        raise ValueError("disposer broke")

    scope.add(fail)
    scope.add(recorder(log, "c"))
    with pytest.raises(ValueError, match="^disposer broke$"):
        scope.dispose()
    assert log == ["c", "fail", "a"]
    assert scope.disposed
    scope.dispose()  # nothing left to raise or run
    assert log == ["c", "fail", "a"]


def test_the_first_failure_is_raised_when_several_fail() -> None:
    scope = Scope()

    def fail(message: str) -> Callable[[], None]:
        def disposer() -> None:
            raise RuntimeError(message)

        return disposer

    scope.add(fail("registered first"))
    scope.add(fail("registered last"))
    with pytest.raises(RuntimeError, match="^registered last$"):  # newest runs first
        scope.dispose()


def test_a_failing_child_still_leaves_its_parent_and_the_parent_unwinds() -> None:
    log: list[str] = []
    parent = Scope()
    parent.add(recorder(log, "parent"))
    child = parent.child()

    def fail() -> None:
        raise KeyError("child")

    child.add(fail)
    with pytest.raises(KeyError):
        child.dispose()
    released = weakref.ref(child)
    del child
    gc.collect()
    assert released() is None
    parent.dispose()
    assert log == ["parent"]


def test_a_failing_child_is_raised_by_its_parent() -> None:
    log: list[str] = []
    parent = Scope()
    parent.add(recorder(log, "parent"))
    child = parent.child()

    def fail() -> None:
        raise KeyError("child")

    child.add(fail)
    with pytest.raises(KeyError):
        parent.dispose()
    assert log == ["parent"]
    assert child.disposed


def test_a_disposer_may_dispose_an_older_registration_early() -> None:
    log: list[str] = []
    scope = Scope()
    older = scope.add(recorder(log, "older"))
    scope.add(older)
    scope.dispose()
    assert log == ["older"]


def test_combine_runs_its_disposers_last_first_and_only_once() -> None:
    log: list[str] = []
    dispose = combine(recorder(log, "a"), recorder(log, "b"), recorder(log, "c"))
    assert log == []
    dispose()
    dispose()
    assert log == ["c", "b", "a"]


def test_combine_keeps_unwinding_past_a_failure_and_raises_the_first() -> None:
    log: list[str] = []

    def fail(message: str) -> Callable[[], None]:
        def disposer() -> None:
            log.append(message)
            raise ValueError(message)

        return disposer

    dispose = combine(recorder(log, "a"), fail("older"), fail("newer"), recorder(log, "d"))
    with pytest.raises(ValueError, match="^newer$"):
        dispose()
    assert log == ["d", "newer", "older", "a"]


def test_a_combined_disposer_can_be_owned_by_a_scope() -> None:
    log: list[str] = []
    scope = Scope()
    scope.add(combine(recorder(log, "a"), recorder(log, "b")))
    scope.add(recorder(log, "c"))
    scope.dispose()
    assert log == ["c", "b", "a"]


class Held:
    """Something a disposer holds (as a session's disposers hold its log and its agent)."""

    def release(self) -> None:
        pass


def test_what_a_disposer_holds_is_freed_once_it_ran_without_the_cyclic_collector() -> None:
    gc.disable()  # only reference counting frees anything: a registration in a cycle would keep it
    try:
        scope = Scope()
        early_held, late_held, child_held = Held(), Held(), Held()
        early = scope.add(early_held.release)
        scope.add(late_held.release)
        scope.child().add(child_held.release)
        early_ref, late_ref, child_ref = (weakref.ref(held) for held in (early_held, late_held, child_held))
        del early_held, late_held, child_held
        early()
        assert early_ref() is None and late_ref() is not None
        scope.dispose()
        assert late_ref() is None and child_ref() is None
    finally:
        gc.enable()


def test_a_removal_takes_its_entry_out_of_its_table_once_it_runs_and_never_another() -> None:
    table = {"s1": 1, "s2": 2}
    scope = Scope()
    scope.add(Removal(table, "s1"))
    gone = Removal(table, "s3")
    gone()  # nothing to remove: nothing happens
    assert table == {"s1": 1, "s2": 2}
    scope.dispose()
    assert table == {"s2": 2}
