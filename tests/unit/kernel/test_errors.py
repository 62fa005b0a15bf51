"""The kernel's errors: one hierarchy, exact messages, the fields that name the cause."""

from __future__ import annotations

import acp_agent.kernel as kernel
from acp_agent.kernel import (
    KernelError,
    LoaderError,
    NoListener,
    ScopeDisposed,
    ServiceConflict,
    ServiceNotFound,
)


def test_the_hierarchy() -> None:
    for error in (LoaderError, NoListener, ServiceConflict, ServiceNotFound):
        assert issubclass(error, KernelError)
    assert issubclass(ScopeDisposed, RuntimeError)


def test_loader_error_names_the_row_and_the_reason() -> None:
    error = LoaderError("row-1", "something is off")
    assert str(error) == "loader row 'row-1': something is off"
    assert (error.row_id, error.reason) == ("row-1", "something is off")


def test_service_not_found_names_the_service() -> None:
    error = ServiceNotFound("llm")
    assert str(error) == "no service named 'llm' is provided"
    assert error.name == "llm"


def test_the_public_surface_is_importable() -> None:
    for name in kernel.__all__:
        assert getattr(kernel, name) is not None
