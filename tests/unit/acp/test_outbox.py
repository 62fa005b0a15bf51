"""`Outbox`: frames written whole and in order, at once after a quiet spell, gathered while they
keep coming, all of them before `run` returns."""

from __future__ import annotations

import anyio
import pytest

from acp_agent.acp.outbox import Outbox

pytestmark = pytest.mark.anyio


class Pipe:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.wrote = anyio.Event()

    async def write(self, data: bytes) -> None:
        self.writes.append(data)
        self.wrote.set()


async def test_the_first_frame_goes_at_once_and_what_comes_meanwhile_in_one_write() -> None:
    pipe = Pipe()
    outbox = Outbox(pipe.write, interval=60)
    with anyio.fail_after(30):  # long before the interval ends
        async with anyio.create_task_group() as tg:
            tg.start_soon(outbox.run)
            outbox.put(b"1\n")
            await pipe.wrote.wait()  # the first frame waits for nothing
            for frame in (b"2\n", b"3\n", b"4\n"):
                outbox.put(frame)
                await anyio.sleep(0)
            assert pipe.writes == [b"1\n"]  # the writer waits out its interval...
            outbox.close()  # ...unless the connection closes: what is queued goes at once
    assert pipe.writes == [b"1\n", b"2\n3\n4\n"]


async def test_close_writes_what_is_queued_and_nothing_more() -> None:
    pipe = Pipe()
    outbox = Outbox(pipe.write)
    outbox.put(b"a\n")
    outbox.close()
    with pytest.raises(anyio.ClosedResourceError):
        outbox.put(b"late\n")
    with anyio.fail_after(10):
        await outbox.run()
    assert pipe.writes == [b"a\n"]


async def test_closed_with_nothing_queued_writes_nothing() -> None:
    pipe = Pipe()
    outbox = Outbox(pipe.write)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(outbox.run)
            await anyio.sleep(0.01)
            outbox.close()
    assert pipe.writes == []


async def test_what_gathered_during_the_interval_goes_in_the_next_write() -> None:
    pipe = Pipe()
    outbox = Outbox(pipe.write, interval=0.01)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(outbox.run)
            outbox.put(b"1\n")
            await pipe.wrote.wait()
            pipe.wrote = anyio.Event()
            for frame in (b"2\n", b"3\n", b"4\n"):
                outbox.put(frame)
            await pipe.wrote.wait()  # the interval ended, with no close
            outbox.close()
    assert pipe.writes == [b"1\n", b"2\n3\n4\n"]
