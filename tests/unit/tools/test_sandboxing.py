"""`bash` behind the sandbox, run locally: the policy a call runs under, the private temporary
directory, the line a refused write adds, and the fail-closed refusal; the file tools' writable
roots, the same set."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from acp_agent.sandbox.policy import FULL_ACCESS, READ_ONLY, WORKSPACE_WRITE
from acp_agent.sandbox.service import SANDBOX, Sandbox
from acp_agent.tools import (
    BashParams,
    BashTool,
    EditFileParams,
    EditFileTool,
    ReadFileParams,
    ReadFileTool,
    ToolCallContext,
    WriteFileParams,
    WriteFileTool,
    texts,
)
from acp_agent.tools.sandboxing import policy_kind, writable_roots
from acp_agent.tools.scratch import scratch_dir

from .helpers import call_context, logged_call

pytestmark = pytest.mark.anyio


def confined_call(tmp_path: Path, backend: str = "landlock") -> ToolCallContext:
    (tmp_path / "work").mkdir()
    call = call_context(cwd=tmp_path / "work")
    call.ctx.provide(SANDBOX, Sandbox(backend))  # type: ignore[arg-type]  # a test picks any setting
    return call


async def bash(call: ToolCallContext, command: str) -> str:
    return (await BashTool().run(BashParams(command=command), call)).plain_text()


def test_the_gates_ruling_else_workspace_write_where_a_sandbox_is_composed(tmp_path: Path) -> None:
    call = call_context(cwd=tmp_path)
    assert policy_kind(call) == FULL_ACCESS  # nothing composed claims a confinement
    call.ctx.provide(SANDBOX, Sandbox("none"))
    assert policy_kind(call) == WORKSPACE_WRITE
    call.sandbox = READ_ONLY
    assert policy_kind(call) == READ_ONLY


async def test_a_refused_write_names_the_path_and_how_to_escalate(tmp_path: Path) -> None:
    call = confined_call(tmp_path)
    text = await bash(call, f"echo x > {tmp_path}/outside")
    assert not (tmp_path / "outside").exists()
    assert text.endswith(
        f"Permission denied\n[sandbox: writing {tmp_path}/outside is not allowed in workspace-write mode;"
        " rerun with escalate: true and a justification if it is needed]\n[exit code 1]"
    )
    assert await bash(call, "echo ok > here && cat here") == "ok\n"
    call.sandbox = FULL_ACCESS  # escalated: unconfined, and nothing to add
    assert await bash(call, f"echo x > {tmp_path}/outside; exit 3") == "[exit code 3]"
    assert (tmp_path / "outside").exists()


async def test_commands_get_the_sessions_private_temporary_directory(tmp_path: Path) -> None:
    call = confined_call(tmp_path)
    call.sandbox = READ_ONLY
    scratch = scratch_dir(call)
    assert stat.S_IMODE(os.stat(scratch).st_mode) == 0o700 and scratch_dir(call) == scratch
    assert await bash(call, 'echo kept > "$TMPDIR/f" && cat "$TMPDIR/f" && echo $TMPDIR') == f"kept\n{scratch}\n"
    call.scope.dispose()  # the session closes
    assert not scratch.exists()


async def test_no_sandbox_fails_closed_saying_what_the_user_can_do(tmp_path: Path) -> None:
    call = confined_call(tmp_path, "none")
    text = await bash(call, f"touch {tmp_path}/ran")
    assert text.startswith("Error: commands must run in a sandbox in this mode, and none is available here:")
    assert "choose the Full access mode" in text and "install bubblewrap" in text
    assert not (tmp_path / "ran").exists()
    bare = call_context(cwd=tmp_path)
    bare.sandbox = WORKSPACE_WRITE  # a gate ruled so, and the composition has no sandbox
    assert "has no sandbox configured" in await bash(bare, f"touch {tmp_path}/ran")
    assert not (tmp_path / "ran").exists()


async def test_the_file_tools_write_where_commands_may_and_nowhere_else(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    extra, outside = tmp_path / "cache", tmp_path / "outside"
    extra.mkdir()
    outside.mkdir()
    call = logged_call(tmp_path / "work")
    sandbox = Sandbox("landlock", extra_writable=[str(extra)])
    call.ctx.provide(SANDBOX, sandbox)
    roots = writable_roots(call)
    # One statement of the set: the file tools' roots are the commands' writable roots.
    assert [str(root.resolve()) for root in roots] == list(
        sandbox.policy(WORKSPACE_WRITE, call.cwd, scratch_dir(call)).writable
    )
    assert roots[0] == call.cwd
    result = await WriteFileTool().run(WriteFileParams(path=f"{extra}/notes.txt", content="a\n"), call)
    assert result.plain_text() == texts.written(f"{extra}/notes.txt", True, 1)
    result = await EditFileTool().run(EditFileParams(path=f"{extra}/notes.txt", old_text="a", new_text="b"), call)
    assert (extra / "notes.txt").read_text() == "b\n" and not result.is_error
    await WriteFileTool().run(WriteFileParams(path=f"{scratch_dir(call)}/t", content="t"), call)
    assert (scratch_dir(call) / "t").read_text() == "t"
    await WriteFileTool().run(WriteFileParams(path="here.txt", content="h"), call)  # relative: the cwd
    assert (tmp_path / "work" / "here.txt").read_text() == "h"
    for path in (f"{outside}/x", "../cache/y"):  # outside every root; relative paths stay in the cwd
        result = await WriteFileTool().run(WriteFileParams(path=path, content="x"), call)
        assert result.error is not None and result.error.code == "outside_workspace"
    assert not (outside / "x").exists() and not (extra / "y").exists()
    result = await ReadFileTool().run(ReadFileParams(path=f"{extra}/notes.txt"), call)  # read before it is changed
    assert result.plain_text().startswith("     1\tb")
    result = await ReadFileTool().run(ReadFileParams(path=f"{outside}/x"), call)
    assert result.error is not None and result.error.code == "outside_workspace"
    bare = logged_call(tmp_path / "work")  # no sandbox composed: the cwd alone
    assert writable_roots(bare) == (bare.cwd,)
    result = await WriteFileTool().run(WriteFileParams(path=f"{extra}/z", content="z"), bare)
    assert result.error is not None and result.error.code == "outside_workspace"


async def test_reading_a_file_of_one_root_does_not_count_for_its_namesake_in_another(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "cache").mkdir()
    for root in ("work", "cache"):
        (tmp_path / root / "notes.txt").write_text("a\n")
    call = logged_call(tmp_path / "work")
    call.ctx.provide(SANDBOX, Sandbox("landlock", extra_writable=[str(tmp_path / "cache")]))
    await ReadFileTool().run(ReadFileParams(path="notes.txt"), call)
    edit = EditFileTool(read_first=True)
    result = await edit.run(EditFileParams(path=f"{tmp_path}/cache/notes.txt", old_text="a", new_text="b"), call)
    assert result.error is not None and result.error.code == "not_read"
    await ReadFileTool().run(ReadFileParams(path=f"{tmp_path}/cache/notes.txt"), call)
    result = await edit.run(EditFileParams(path=f"{tmp_path}/cache/notes.txt", old_text="a", new_text="b"), call)
    assert not result.is_error and (tmp_path / "cache" / "notes.txt").read_text() == "b\n"
