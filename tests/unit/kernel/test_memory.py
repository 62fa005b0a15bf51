"""`release_free_memory`: a full collection, then glibc's trim where the C library has one."""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Iterator

import pytest

from acp_agent.kernel import memory


@pytest.fixture(autouse=True)
def fresh_lookup() -> Iterator[None]:
    memory._malloc_trim.cache_clear()
    yield
    memory._malloc_trim.cache_clear()


class Library:
    """A C library as ctypes shows it, with or without `malloc_trim`."""

    def __init__(self, trims: bool) -> None:
        self.trimmed: list[int] = []
        if trims:
            self.malloc_trim = lambda pad: self.trimmed.append(pad) or 1


def test_the_process_c_library_is_looked_up_once_and_has_the_trim_on_glibc() -> None:
    memory.release_free_memory()
    memory.release_free_memory()
    assert memory._malloc_trim.cache_info().misses == 1
    assert memory._malloc_trim() is not None  # this machine's Python runs on glibc


def test_the_trim_runs_after_a_full_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    library = Library(trims=True)
    collected: list[int] = []
    monkeypatch.setattr(ctypes, "CDLL", lambda name: library)
    monkeypatch.setattr(gc, "collect", lambda: collected.append(len(library.trimmed)) or 0)
    memory.release_free_memory()
    assert collected == [0] and library.trimmed == [0]


def test_a_c_library_without_the_trim_gets_the_collection_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctypes, "CDLL", lambda name: Library(trims=False))
    memory.release_free_memory()
    assert memory._malloc_trim() is None
