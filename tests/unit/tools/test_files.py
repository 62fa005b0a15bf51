"""The file tools on real files in tmp_path: path containment, line windows, exact edits, and
what each call shows the editor (locations, diffs) through its `tool/display` events."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from acp_agent.kernel import Row, compose
from acp_agent.session.content import ToolCallBlock
from acp_agent.session.errors import UnknownEventType
from acp_agent.session.persistence import SESSIONS
from acp_agent.tools import (
    WORKSPACE_SERVICE,
    Diff,
    DiskWorkspace,
    EditFileParams,
    EditFileTool,
    Location,
    OutsideWorkspace,
    ReadFileParams,
    ReadFileTool,
    Target,
    ToolCallContext,
    ToolPresentation,
    ToolRegistry,
    ToolResult,
    Workspace,
    WriteFileParams,
    WriteFileTool,
    prepare,
    resolve_in,
    workspace_for,
)
from acp_agent.tools.lines import Lines, Window, read_window
from acp_agent.tools.registry import TOOLS

from .helpers import call_context, logged, logged_call

pytestmark = pytest.mark.anyio

NOTES = "title: notes\nstatus: draft\nowner: ann\nstatus: draft\n"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """The session cwd, with a sibling directory outside it holding a secret."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text(NOTES)
    return work


def displays(call: ToolCallContext) -> list[dict[str, Any]]:
    return [data.dump() for data in logged(call, "tool/display")]


async def read(cwd: Path, tool: ReadFileTool | None = None, **params: Any) -> tuple[ToolResult, ToolCallContext]:
    call = logged_call(cwd)
    return await (tool or ReadFileTool()).run(ReadFileParams(**params), call), call


async def write(cwd: Path, **params: Any) -> tuple[ToolResult, ToolCallContext]:
    call = logged_call(cwd)
    return await WriteFileTool().run(WriteFileParams(**params), call), call


async def edit(cwd: Path, **params: Any) -> tuple[ToolResult, ToolCallContext]:
    call = logged_call(cwd)
    return await EditFileTool().run(EditFileParams(**params), call), call


def refused(result: ToolResult, code: str, message: str) -> None:
    assert result.is_error and result.error is not None
    assert (result.error.code, result.error.message) == (code, message)
    assert result.plain_text() == f"Error: {message}"


# --- paths ------------------------------------------------------------------------------------


def test_paths_resolve_inside_the_cwd_relative_or_absolute(cwd: Path) -> None:
    assert resolve_in(cwd, "notes.txt").path == cwd / "notes.txt"
    assert resolve_in(cwd, str(cwd / "notes.txt")).shown == "notes.txt"
    inside = resolve_in(cwd, "new/../sub/./x.py")  # `..` that stays inside is fine
    assert (inside.path, inside.shown) == (cwd / "sub" / "x.py", "sub/x.py")
    assert resolve_in(cwd, "").shown == "."


def test_a_symlink_inside_the_cwd_leads_to_its_target(cwd: Path) -> None:
    (cwd / "link.txt").symlink_to(cwd / "notes.txt")
    assert resolve_in(cwd, "link.txt").shown == "notes.txt"


def test_paths_stay_in_the_cwds_own_terms_when_the_cwd_is_a_symlink(cwd: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(cwd)
    target = resolve_in(alias, "notes.txt")
    assert target.path == alias / "notes.txt"  # the path the editor knows, not the resolved one
    assert resolve_in(alias, str(cwd / "notes.txt")).path == alias / "notes.txt"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../outside/secret.txt", "../outside/secret.txt is outside the working directory {cwd}"),
        ("sub/../../outside/secret.txt", "sub/../../outside/secret.txt is outside the working directory {cwd}"),
        ("{tmp}/outside/secret.txt", "{tmp}/outside/secret.txt is outside the working directory {cwd}"),
        ("/", "/ is outside the working directory {cwd}"),
        ("leak.txt", "leak.txt leads outside the working directory {cwd} through a symbolic link"),
        ("out/secret.txt", "out/secret.txt leads outside the working directory {cwd} through a symbolic link"),
        ("out/new.txt", "out/new.txt leads outside the working directory {cwd} through a symbolic link"),
    ],
)
def test_escapes_are_refused(cwd: Path, tmp_path: Path, path: str, message: str) -> None:
    (cwd / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (cwd / "out").symlink_to(tmp_path / "outside")
    with pytest.raises(OutsideWorkspace) as caught:
        resolve_in(cwd, path.format(tmp=tmp_path))
    assert str(caught.value) == message.format(cwd=cwd, tmp=tmp_path)


async def test_every_tool_refuses_an_escape_and_touches_nothing_outside(cwd: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    (cwd / "leak.txt").symlink_to(secret)
    message = f"leak.txt leads outside the working directory {cwd} through a symbolic link"
    result, call = await read(cwd, path="leak.txt")
    refused(result, "outside_workspace", message)
    result, _ = await write(cwd, path="leak.txt", content="pwned\n")
    refused(result, "outside_workspace", message)
    result, _ = await edit(cwd, path="leak.txt", old_text="secret", new_text="pwned")
    refused(result, "outside_workspace", message)
    result, _ = await write(cwd, path="../outside/new.txt", content="x")
    refused(result, "outside_workspace", f"../outside/new.txt is outside the working directory {cwd}")
    result, _ = await write(cwd, path=str(tmp_path / "outside" / "abs.txt"), content="x")
    assert result.error is not None and result.error.code == "outside_workspace"
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.txt"]
    assert secret.read_text() == "secret\n"
    assert displays(call) == []  # nothing shown for a refused call


# --- read_file --------------------------------------------------------------------------------


async def test_read_returns_numbered_lines_and_shows_the_location(cwd: Path) -> None:
    result, call = await read(cwd, path="notes.txt")
    assert not result.is_error
    assert (
        result.plain_text() == "     1\ttitle: notes\n     2\tstatus: draft\n     3\towner: ann\n     4\tstatus: draft"
    )
    assert displays(call) == [{"callId": "call_1", "locations": [{"path": f"{cwd}/notes.txt", "line": 1}]}]


async def test_a_window_of_lines_says_what_remains(cwd: Path) -> None:
    result, call = await read(cwd, path="notes.txt", offset=2, limit=2)
    assert result.plain_text() == (
        "     2\tstatus: draft\n     3\towner: ann\n[lines 2-3; more follow: continue with offset 4]"
    )
    assert displays(call)[0]["locations"] == [{"path": f"{cwd}/notes.txt", "line": 2}]
    result, _ = await read(cwd, path="notes.txt", offset=3)
    assert result.plain_text() == "     3\towner: ann\n     4\tstatus: draft\n[lines 3-4 of 4]"
    result, _ = await read(cwd, path="notes.txt", limit=10)  # more than there is: the whole file
    assert result.plain_text().endswith("     4\tstatus: draft")


async def test_one_call_returns_at_most_max_lines_and_cuts_long_lines(cwd: Path) -> None:
    tool = ReadFileTool(max_lines=2, max_line_chars=5)
    result, _ = await read(cwd, tool, path="notes.txt", limit=3)
    assert result.plain_text() == (
        "     1\ttitle[... line cut]\n     2\tstatu[... line cut]\n[lines 1-2; more follow: continue with offset 3]"
    )
    (cwd / "one.txt").write_text("abcdefg")  # no final newline: still one line
    result, _ = await read(cwd, tool, path="one.txt")
    assert result.plain_text() == "     1\tabcde[... line cut]"
    assert tool.description == (
        "Read a text file. Lines come back numbered like `cat -n` (number, tab, text); the numbers are not "
        "part of the file. One call returns at most 2 lines and 256 KiB: use `offset` (1-based line) and "
        "`limit` to read a window of a long file; the end of the result says when lines remain. Lines longer "
        "than 5 characters are cut, ending with `[... line cut]`."
    )


async def test_one_call_returns_at_most_256_kib(cwd: Path) -> None:
    (cwd / "wide.txt").write_text("".join(f"{'w' * 1999}\n" for _ in range(200)))
    result, _ = await read(cwd, path="wide.txt", offset=2)
    text = result.plain_text()
    assert text.count("\n") == 130 and len(text.encode()) <= 256 * 1024
    assert text.endswith("\n[lines 2-131; the next line would pass this call's 256 KiB: continue with offset 132]")


async def test_an_empty_file_and_an_offset_past_the_end(cwd: Path) -> None:
    (cwd / "empty.txt").write_text("")
    result, _ = await read(cwd, path="empty.txt")
    assert result.plain_text() == "(empty file)"
    result, _ = await read(cwd, path="empty.txt", offset=2)
    refused(result, "offset_out_of_range", "offset 2 is past the end of empty.txt, which has 0 lines")
    result, call = await read(cwd, path="notes.txt", offset=5)
    refused(result, "offset_out_of_range", "offset 5 is past the end of notes.txt, which has 4 lines")
    assert displays(call) == []
    (cwd / "one.txt").write_text("x\n")
    result, _ = await read(cwd, path="one.txt", offset=2)
    assert result.plain_text().endswith("which has 1 line")


async def test_file_errors_are_results_the_model_can_act_on(cwd: Path) -> None:
    (cwd / "bin.dat").write_bytes(b"\xff\xfe not UTF-8")
    (cwd / "nul.dat").write_bytes(b"text, then a NUL: \x00")
    (cwd / "dir").mkdir()
    result, _ = await read(cwd, path="missing.txt")
    refused(result, "not_found", "missing.txt does not exist")
    result, _ = await read(cwd, path="dir")
    refused(result, "is_a_directory", "dir is a directory, not a file")
    result, _ = await read(cwd, path="bin.dat")
    refused(result, "not_text", "bin.dat is not a UTF-8 text file")
    result, _ = await read(cwd, path="nul.dat")
    refused(result, "not_text", "nul.dat is a binary file (a NUL byte in its first 8 KiB), not text")
    result, _ = await read(cwd, path="notes.txt/child")
    refused(result, "io_error", "cannot access notes.txt/child: Not a directory")


def test_read_presentation_and_rendering() -> None:
    tool = ReadFileTool()
    assert tool.concurrency_safe
    assert tool.present(ReadFileParams(path="a.py")) == ToolPresentation(title="Read a.py", kind="read")
    titles = [
        tool.present(ReadFileParams(path="a.py", **window)).title
        for window in ({"offset": 10, "limit": 5}, {"offset": 10}, {"limit": 5})
    ]
    assert titles == ["Read a.py (lines 10-14)", "Read a.py (from line 10)", "Read a.py (lines 1-5)"]
    assert tool.render_result(ToolResult.text("     1\tx = 1")) == ["```\n     1\tx = 1\n```"]


# --- write_file -------------------------------------------------------------------------------


async def test_write_creates_a_file_and_its_parent_directories(cwd: Path) -> None:
    result, call = await write(cwd, path="docs/guide/intro.md", content="# Intro\n\nHello.\n")
    assert result.plain_text() == "Created docs/guide/intro.md (3 lines)."
    assert (cwd / "docs" / "guide" / "intro.md").read_text() == "# Intro\n\nHello.\n"
    path = f"{cwd}/docs/guide/intro.md"
    assert displays(call) == [
        {"callId": "call_1", "locations": [{"path": path}], "diffs": [{"path": path, "newText": "# Intro\n\nHello.\n"}]}
    ]


async def test_write_replaces_a_file_and_shows_what_it_had(cwd: Path) -> None:
    result, call = await write(cwd, path=str(cwd / "notes.txt"), content="one line")
    assert result.plain_text() == "Overwrote notes.txt (1 line)."
    assert (cwd / "notes.txt").read_text() == "one line"
    [shown] = logged(call, "tool/display")
    assert shown.diffs == [Diff(path=f"{cwd}/notes.txt", old_text=NOTES, new_text="one line")]


async def test_write_refuses_a_directory_and_a_binary_file(cwd: Path) -> None:
    (cwd / "dir").mkdir()
    (cwd / "bin.dat").write_bytes(b"\xff\xfe")
    result, call = await write(cwd, path="dir", content="x")
    refused(result, "is_a_directory", "dir is a directory, not a file")
    result, _ = await write(cwd, path="bin.dat", content="x")
    refused(result, "not_text", "bin.dat is not a UTF-8 text file")
    assert (cwd / "bin.dat").read_bytes() == b"\xff\xfe"
    assert displays(call) == []


async def test_a_change_of_a_file_over_1_mib_shows_a_note_instead_of_the_text_twice(cwd: Path) -> None:
    large = "x" * (1024 * 1024) + "\n"
    result, call = await write(cwd, path="notes.txt", content=large)
    assert result.plain_text() == "Overwrote notes.txt (1 line)."
    note = f"notes.txt is over 1 MiB ({len(NOTES)} bytes before, 1.0 MiB after): the change is not shown as a diff."
    assert displays(call) == [{"callId": "call_1", "locations": [{"path": f"{cwd}/notes.txt"}], "notes": [note]}]
    result, call = await edit(cwd, path="notes.txt", old_text="x\n", new_text="y\n")
    assert not result.is_error
    assert logged(call, "tool/display")[0].notes == [
        "notes.txt is over 1 MiB (1.0 MiB before, 1.0 MiB after): the change is not shown as a diff."
    ]
    result, call = await write(cwd, path="notes.txt", content="small again\n")
    assert logged(call, "tool/display")[0].notes == [
        "notes.txt is over 1 MiB (1.0 MiB before, 12 bytes after): the change is not shown as a diff."
    ]


def test_write_presentation() -> None:
    tool = WriteFileTool()
    assert tool.present(WriteFileParams(path="a.py", content="")) == ToolPresentation(title="Write a.py", kind="edit")
    assert not tool.concurrency_safe


# --- edit_file --------------------------------------------------------------------------------


async def test_edit_replaces_the_one_occurrence_and_shows_the_diff(cwd: Path) -> None:
    result, call = await edit(cwd, path="notes.txt", old_text="owner: ann", new_text="owner: bob\nreviewer: cy")
    assert result.plain_text() == "Edited notes.txt: replaced 1 occurrence at line 3."
    after = "title: notes\nstatus: draft\nowner: bob\nreviewer: cy\nstatus: draft\n"
    assert (cwd / "notes.txt").read_text() == after
    path = f"{cwd}/notes.txt"
    assert logged(call, "tool/display")[0].locations == [Location(path=path, line=3)]
    assert logged(call, "tool/display")[0].diffs == [Diff(path=path, old_text=NOTES, new_text=after)]


async def test_an_ambiguous_edit_is_refused_naming_the_count(cwd: Path) -> None:
    result, call = await edit(cwd, path="notes.txt", old_text="status: draft", new_text="status: final")
    refused(
        result,
        "ambiguous_match",
        "old_text occurs 2 times in notes.txt; include more surrounding lines to make it unique, "
        "or set replace_all to replace all 2",
    )
    assert (cwd / "notes.txt").read_text() == NOTES
    assert displays(call) == []


async def test_replace_all_replaces_every_occurrence(cwd: Path) -> None:
    result, _ = await edit(cwd, path="notes.txt", old_text="status: draft", new_text="status: final", replace_all=True)
    assert result.plain_text() == "Edited notes.txt: replaced 2 occurrences (the first at line 2)."
    assert (cwd / "notes.txt").read_text() == NOTES.replace("draft", "final")


async def test_a_missing_match_and_a_missing_file_are_refused(cwd: Path) -> None:
    result, call = await edit(cwd, path="notes.txt", old_text="status:  draft", new_text="x")
    refused(
        result,
        "no_match",
        "old_text was not found in notes.txt (0 occurrences); it must match the file exactly, "
        "whitespace and indentation included",
    )
    assert displays(call) == []
    result, _ = await edit(cwd, path="nope.txt", old_text="a", new_text="b")
    refused(result, "not_found", "nope.txt does not exist")
    assert not (cwd / "nope.txt").exists()


async def test_an_edit_that_changes_nothing_is_refused(cwd: Path) -> None:
    result, _ = await edit(cwd, path="notes.txt", old_text="owner: ann", new_text="owner: ann")
    refused(result, "no_change", "old_text and new_text are the same: there is nothing to change")


def test_edit_arguments_and_presentation() -> None:
    tool = EditFileTool()
    assert tool.present(EditFileParams(path="a.py", old_text="a", new_text="b")) == ToolPresentation(
        title="Edit a.py", kind="edit"
    )
    registry = ToolRegistry()
    registry.register(tool)
    empty = ToolCallBlock(id="c", name="edit_file", arguments='{"path": "a", "old_text": "", "new_text": "b"}')
    error = prepare(empty, registry, None).error
    assert error is not None and error.plain_text().startswith("Error: invalid arguments for 'edit_file': old_text:")
    assert set(tool.schema().parameters["properties"]) == {"path", "old_text", "new_text", "replace_all"}


# --- workspaces -------------------------------------------------------------------------------


class MemoryWorkspace(Workspace):
    """Files in a dict, as an editor's buffers would be."""

    def __init__(self, files: dict[Path, str]) -> None:
        self.files = files

    async def read_lines(self, target: Target, window: Window) -> Lines:
        return read_window(io.BytesIO((await self.read_text(target)).encode()).read, window)

    async def read_text(self, target: Target) -> str:
        try:
            return self.files[target.path]
        except KeyError:
            raise FileNotFoundError(target.path) from None

    async def write_text(self, target: Target, text: str) -> None:
        self.files[target.path] = text


async def test_the_workspace_service_picks_each_calls_workspace(cwd: Path) -> None:
    buffers = MemoryWorkspace({cwd / "notes.txt": "unsaved: yes\n"})
    picked: list[str] = []

    def provider(call: ToolCallContext) -> Workspace:
        picked.append(call.call_id)
        return buffers

    call = logged_call(cwd, call_id="call_9")
    call.ctx.provide(WORKSPACE_SERVICE, provider)
    result = await EditFileTool().run(EditFileParams(path="notes.txt", old_text="yes", new_text="no"), call)
    assert result.plain_text() == "Edited notes.txt: replaced 1 occurrence at line 1."
    assert buffers.files[cwd / "notes.txt"] == "unsaved: no\n"
    assert (cwd / "notes.txt").read_text() == NOTES  # the disk was not touched
    result = await WriteFileTool().run(WriteFileParams(path="new.txt", content="n"), call)
    assert result.plain_text() == "Created new.txt (1 line)."
    assert picked == ["call_9", "call_9"]


async def test_without_a_service_files_are_on_disk(tmp_path: Path) -> None:
    disk = workspace_for(call_context(cwd=tmp_path))
    assert isinstance(disk, DiskWorkspace)
    target = resolve_in(tmp_path, "a/b.txt")
    await disk.write_text(target, "crlf\r\nkept\r\n")
    assert (tmp_path / "a" / "b.txt").read_bytes() == b"crlf\r\nkept\r\n"
    assert await disk.read_text(target) == "crlf\r\nkept\r\n"


# --- the plugin -------------------------------------------------------------------------------


def test_the_plugin_registers_the_three_tools_and_unregisters_them(tmp_path: Path) -> None:
    ctx = compose(
        [
            Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path)}),
            Row(id="tools", name="acp_agent.tools.plugin"),
            Row(id="files", name="acp_agent.tools.files", config={"maxLines": 7, "maxLineChars": 9}),
        ]
    )
    tools = {tool.name: tool for tool in ctx.get(TOOLS).visible(None)}
    assert list(tools) == ["read_file", "write_file", "edit_file"]
    read_tool = tools["read_file"]
    assert isinstance(read_tool, ReadFileTool) and (read_tool.max_lines, read_tool.max_line_chars) == (7, 9)
    registry, tool_registry = ctx.get(SESSIONS).registry, ctx.get(TOOLS)
    assert registry.invariant_class("tool/display") == "turn"
    ctx.scope.dispose()
    assert tool_registry.visible(None) == []
    with pytest.raises(UnknownEventType):
        registry.invariant_class("tool/display")


async def test_a_symlink_loop_inside_the_cwd_is_an_io_error(cwd: Path) -> None:
    os.symlink(cwd / "b", cwd / "a")
    os.symlink(cwd / "a", cwd / "b")
    result, _ = await read(cwd, path="a")
    assert result.error is not None and result.error.code == "io_error"
    assert result.error.message.startswith("cannot access a: Too many levels of symbolic links")
