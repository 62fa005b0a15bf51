"""What a block of code leaves allocated behind it: the leak checks' one measure."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class LeftBehind:
    bytes: int = 0
    """Still allocated after the block and a full collection, of what the block allocated."""


@contextmanager
def left_behind() -> Iterator[LeftBehind]:
    """Trace the block's allocations (tracemalloc); on leaving it, `bytes` is what of them a full
    collection did not free. Warm up before it: what a first call caches counts too."""
    found = LeftBehind()
    gc.collect()
    tracemalloc.start()
    try:
        yield found
        gc.collect()
        found.bytes = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
