"""Output that does not fit in a tool's answer, kept whole in a file (`Overflow`), bounded.

A command's output past `max_output_bytes` is cut in the middle for the model; with an overflow
file all of it is also written to the session's scratch directory (`scratch.py`), so the model can
read or grep the part it did not get. The file is bounded (`LIMIT`, 64 MiB): past it, its first
half stays, the last half is kept in a ring beside it, and when the output ends the ring is put
after the head with a line saying how many bytes of the middle were dropped.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Final

from acp_agent.tools import texts

LIMIT: Final = 64 * 1024 * 1024
_COPY: Final = 1024 * 1024


class Overflow:
    """A file taking a stream's bytes in order, at most `limit` of them (the middle dropped)."""

    def __init__(self, directory: Path, *, limit: int = LIMIT) -> None:
        fd, name = tempfile.mkstemp(prefix="output-", suffix=".txt", dir=directory)
        self.path = Path(name)
        self._file: BinaryIO = os.fdopen(fd, "wb")
        self._head_room = limit // 2
        self._ring_size = limit - self._head_room
        self._ring: BinaryIO | None = None
        self._ring_written = 0
        self.total = 0

    def write(self, data: bytes) -> None:
        self.total += len(data)
        if self._head_room:
            head = data[: self._head_room]
            self._file.write(head)
            self._head_room -= len(head)
            data = data[len(head) :]
        while data:
            if self._ring is None:
                self._ring = tempfile.TemporaryFile(dir=self.path.parent)
            at = self._ring_written % self._ring_size
            piece = data[: self._ring_size - at]
            self._ring.seek(at)
            self._ring.write(piece)
            self._ring_written += len(piece)
            data = data[len(piece) :]

    def close(self) -> None:
        """Put the ring's bytes, oldest first, after the head; the file is complete."""
        try:
            if self._ring is not None:
                start = 0
                if self._ring_written > self._ring_size:
                    dropped = self._ring_written - self._ring_size
                    self._file.write(f"\n{texts.overflow_dropped(dropped)}\n".encode())
                    start = self._ring_written % self._ring_size
                kept = min(self._ring_written, self._ring_size)
                self._copy(start, kept - start if start else kept)
                if start:
                    self._copy(0, start)
                self._ring.close()
        finally:
            self._file.close()

    def _copy(self, offset: int, count: int) -> None:
        assert self._ring is not None
        self._ring.seek(offset)
        while count > 0:
            chunk = self._ring.read(min(_COPY, count))
            self._file.write(chunk)
            count -= len(chunk)
