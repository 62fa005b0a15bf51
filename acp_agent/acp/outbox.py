"""The frames waiting for stdout, and the one task that writes them.

Queueing a frame is a list append (the hot path: a streamed delta's frame is queued from inside
the session log's delivery). The writer wakes for the first frame after a quiet spell and writes
it at once; while frames keep coming, it writes what gathered at most once per `interval`, in
one `write(2)`. A streamed answer costs a write and a wakeup of the client every interval instead
of one per delta: a pipe write that wakes its reader costs more than building the frame, and
`interval` (a millisecond) is far below what an editor's user sees.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

WRITE_INTERVAL = 0.001
"""Seconds between two writes while frames keep coming (the first after a quiet spell goes at once)."""


class Outbox:
    """Frames in the order they are queued, written whole by `run` until `close` (which ends
    the wait for the next write: what is queued then goes at once)."""

    def __init__(self, write: Callable[[bytes], Awaitable[None]], *, interval: float = WRITE_INTERVAL) -> None:
        self._write = write
        self._interval = interval
        self._frames: list[bytes] = []
        self._queued = anyio.Event()
        """Set by the first frame queued since the writer took the others (or by `close`)."""
        self._closing = False
        self._pause = anyio.CancelScope()
        """The writer's wait between two writes, which `close` cuts short. A sleep in a scope of
        its own, not a wait with a timeout: a scope's timeout cancels the wait, a cost paid at
        every write of a streamed answer."""

    def put(self, frame: bytes) -> None:
        """Queue one encoded frame (a whole line)."""
        if self._closing:
            raise anyio.ClosedResourceError
        if not self._frames:  # else the writer has yet to take those: it will see this one too
            self._queued.set()
        self._frames.append(frame)

    def close(self) -> None:
        """No more frames: `run` returns once the queued ones are written."""
        self._closing = True
        self._queued.set()
        self._pause.cancel()

    async def run(self) -> None:
        """Write the queued frames until `close`, then what is left."""
        while True:
            while not self._frames:
                if self._closing:
                    return
                await self._queued.wait()
            self._queued = anyio.Event()
            frames, self._frames = self._frames, []
            await self._write(b"".join(frames))
            if not self._closing:  # what comes meanwhile goes in the next write, unless the
                self._pause = anyio.CancelScope()  # connection closes: then at once
                with self._pause:
                    await anyio.sleep(self._interval)
