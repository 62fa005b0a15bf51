"""Running one command hook: the shell in the session's cwd, the event's JSON on stdin.

The hook runs in a process group of its own, with the server's environment minus its credential
variables (as a `bash` command, `acp_agent.environ`) plus `CLAUDE_PROJECT_DIR`. Its timeout, or a
cancellation (`session/cancel`), kills the whole group before the call returns or the cancellation
goes on; in the server, what it leaves running is ended with the session (`acp_agent.processes`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_agent.processes.registry import CommandGroup
from acp_agent.processes.spawn import open_leader
from acp_agent.tools.bash import SHELL, reap

OUTPUT_LIMIT: Final = 64 * 1024
"""Bytes kept of a hook's stdout and of its stderr (the rest is read and dropped)."""


@dataclass(frozen=True)
class HookRun:
    """How a hook ended: its exit code (None: timed out or did not start), its output."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False


async def run_hook(
    command: str,
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    group: CommandGroup | None = None,
) -> HookRun:
    """Run `command` with `stdin`; a hook that cannot start is a run with its reason on stderr."""
    try:
        process = await open_leader(
            [SHELL, "-c", command],
            cwd=cwd,
            env=env,
            group=group,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        return HookRun(None, "", f"the hook did not start: {exc.strerror or exc}")
    out, err = bytearray(), bytearray()
    finished = False
    try:
        with anyio.move_on_after(timeout):
            async with anyio.create_task_group() as tg:
                assert process.stdin is not None and process.stdout is not None and process.stderr is not None
                tg.start_soon(_feed, process.stdin, stdin)
                tg.start_soon(_drain, process.stdout, out)
                tg.start_soon(_drain, process.stderr, err)
                await process.wait()
            finished = True
    finally:
        await reap(process, kill=not finished)
        if group is not None:
            group.exited()
    text, errors = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if not finished:
        return HookRun(None, text, errors, timed_out=True)
    return HookRun(process.returncode, text, errors)


async def _feed(stream: ByteSendStream, data: bytes) -> None:
    # A hook that exits without reading its input closes the pipe: that is its right.
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.send(data)
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.aclose()


async def _drain(stream: ByteReceiveStream, kept: bytearray) -> None:
    async for chunk in stream:
        kept += chunk[: max(0, OUTPUT_LIMIT - len(kept))]
