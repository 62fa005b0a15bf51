"""Reading stdin: its bytes as they come, from a pipe or a regular file, on the event loop; what
stdin is (the processes started on each kind are `tests/e2e/test_stdin.py`)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from acp_agent.acp.stdio import READ_SIZE, Stdin, read_chunks, stdin_of, writer

pytestmark = pytest.mark.anyio

DATA = b'{"a":1}\n' + b"x" * (3 * READ_SIZE) + b"\nlast"


async def collect(fd: int) -> list[bytes]:
    return [chunk async for chunk in read_chunks(fd)]


async def test_a_regular_file_is_read_whole_a_read_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(DATA)
    with path.open("rb") as file:
        chunks = await collect(file.fileno())
    assert b"".join(chunks) == DATA and max(map(len, chunks)) == READ_SIZE


async def test_a_device_that_cannot_be_watched_is_read_as_it_is() -> None:
    with open(os.devnull, "rb") as null:
        assert await collect(null.fileno()) == []


def test_what_stdin_is(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(DATA)
    reader, writer_end = os.pipe()
    with open(os.devnull) as null, path.open() as file, open(reader) as pipe, open(writer_end, "w"):
        assert [stdin_of(each) for each in (None, null, file, pipe)] == [
            Stdin.NONE,
            Stdin.NONE,
            Stdin.STREAM,
            Stdin.STREAM,
        ]
    assert stdin_of(file) is Stdin.NONE  # its file object closed
    gone = path.open()
    os.close(gone.fileno())  # its descriptor closed under it
    assert stdin_of(gone) is Stdin.NONE
    with pytest.raises(OSError):
        gone.close()


async def test_a_pipe_gives_what_it_holds_as_it_arrives() -> None:
    read_end, write_end = os.pipe()
    pieces = [b'{"a"', b":1}\n{", b'"b":2}\n']

    async def feed() -> None:
        for piece in pieces:
            await anyio.to_thread.run_sync(os.write, write_end, piece)
            await anyio.sleep(0.01)
        os.close(write_end)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(feed)
            chunks = await collect(read_end)
    finally:
        os.close(read_end)
    assert b"".join(chunks) == b"".join(pieces)


async def test_waiting_for_input_can_be_cancelled() -> None:
    read_end, write_end = os.pipe()
    try:
        with anyio.move_on_after(0.05) as waited:
            await collect(read_end)  # nothing ever comes
        assert waited.cancelled_caught
    finally:
        os.close(read_end)
        os.close(write_end)


async def test_a_full_pipe_is_waited_for_while_the_loop_goes_on() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    data = bytes(range(256)) * 4096  # 1 MiB: many times what a pipe holds
    received = bytearray()
    write = writer(write_end)

    async def read() -> None:
        while len(received) < len(data):
            await anyio.wait_readable(read_end)
            received.extend(os.read(read_end, 1 << 16))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            await write(data)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert received == data


async def test_a_closed_pipe_drops_what_nobody_can_read_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    write = writer(write_end)
    try:
        await write(b"one\n")
        await write(b"two\n")
    finally:
        os.close(write_end)
    assert sum("stdout is closed" in r.message for r in caplog.records) == 1
