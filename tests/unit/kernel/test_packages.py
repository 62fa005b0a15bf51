"""A package registered without its `__init__`: submodules import alone; its own names run the
`__init__` once, a second thread asking meanwhile waiting for it."""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_agent.kernel.packages import register_without_init

PACKAGE = "lazy_init_example"
INIT = """
import sys
import lazy_init_sync as sync
sync.runs.append(1)
sync.early = hasattr(sys.modules[__name__], "VALUE")  # as in any module: not defined yet
sync.started.set()
sync.proceed.wait(10)
VALUE = 42
"""
SYNC = """
import threading
runs = []
early = None
started, proceed = threading.Event(), threading.Event()
"""


@pytest.fixture
def sync(package: Any) -> Any:
    """The events the example's `__init__` reports to and waits on."""
    return importlib.import_module("lazy_init_sync")


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    (tmp_path / PACKAGE).mkdir()
    (tmp_path / PACKAGE / "__init__.py").write_text(INIT, encoding="utf-8")
    (tmp_path / PACKAGE / "sub.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "lazy_init_sync.py").write_text(SYNC, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_without_init(PACKAGE)
    yield sys.modules[PACKAGE]
    for name in [PACKAGE, f"{PACKAGE}.sub", "lazy_init_sync"]:
        sys.modules.pop(name, None)


def test_a_submodule_imports_without_the_init_and_a_name_runs_it(package: Any, sync: Any) -> None:
    sub = importlib.import_module(f"{PACKAGE}.sub")
    assert sub.X == 1 and sync.runs == []
    sync.proceed.set()
    assert package.VALUE == 42 and sync.runs == [1] and sync.early is False
    register_without_init(PACKAGE)  # imported already: left as it is
    assert sys.modules[PACKAGE] is package and package.VALUE == 42 and sync.runs == [1]


def test_a_second_thread_asking_meanwhile_waits_for_the_init(package: Any, sync: Any) -> None:
    seen: dict[str, object] = {}

    def ask(who: str) -> None:
        try:
            seen[who] = package.VALUE
        except AttributeError as exc:
            seen[who] = exc

    first = threading.Thread(target=ask, args=("first",))
    first.start()
    assert sync.started.wait(10)  # the first thread runs the `__init__`
    second = threading.Thread(target=ask, args=("second",))
    second.start()
    time.sleep(0.05)  # the second asks while the `__init__` has not defined the name yet
    sync.proceed.set()
    first.join(10)
    second.join(10)
    assert seen == {"first": 42, "second": 42} and sync.runs == [1]
