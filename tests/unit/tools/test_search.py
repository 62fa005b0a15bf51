"""glob and grep on real trees in tmp_path, through both engines: every expectation below holds for
ripgrep and for the pure-Python fallback alike (the same output format, order and limits)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acp_agent.kernel import Row, compose
from acp_agent.tools import ToolCallContext, ToolRegistry
from acp_agent.tools.base import DISPLAY_EVENT, ToolResult
from acp_agent.tools.pysearch import PythonSearcher
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.search import GlobParams, GlobTool, GrepParams, GrepTool, pick_searcher
from acp_agent.tools.searchers import RipgrepSearcher, Searcher, hidden_named, ripgrep_binary

from .helpers import logged, logged_call

pytestmark = pytest.mark.anyio

RG = ripgrep_binary()


@pytest.fixture(params=["ripgrep", "python"])
def searcher(request: pytest.FixtureRequest) -> Searcher:
    if request.param == "python":
        return PythonSearcher(30)
    if RG is None:  # pragma: no cover - the ripgrep wheel is a dependency
        pytest.skip("the ripgrep wheel is not installed here")
    return RipgrepSearcher(RG, 30)


def touch(path: Path, text: str, age: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = 1_700_000_000 - age
    os.utime(path, (stamp, stamp))


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """A git repository (cwd) holding sources, ignored files, hidden ones, a binary and links out."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("def handler(): pass  # secret\n")
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    touch(work / ".gitignore", "build/\n*.log\n")
    touch(work / "app.py", "import os\n\ndef handler(event):\n    return event\n", age=30)
    touch(work / "src" / "util.py", "def helper():\n    pass\n\n\ndef handler():\n    pass\n", age=10)
    touch(work / "src" / "web" / "test_view.ts", "export function handler() {}\n", age=20)
    touch(work / "src" / "notes.md", "# handler notes\n", age=40)
    touch(work / "build" / "out.py", "def handler(): pass\n")
    touch(work / "debug.log", "handler called\n")
    touch(work / "vendor" / ".ignore", "*.py\n")
    touch(work / "vendor" / "lib.py", "def handler(): pass\n")
    touch(work / ".github" / "ci.yml", "run: handler\n")
    (work / "blob.bin").write_bytes(b"handler\0binary\n")
    (work / "leak.py").symlink_to(tmp_path / "outside" / "secret.py")
    (work / "leakdir").symlink_to(tmp_path / "outside")
    return work


def call(cwd: Path) -> ToolCallContext:
    return logged_call(cwd)


async def glob(searcher: Searcher, cwd: Path, pattern: str, path: str | None = None, **kw: Any) -> ToolResult:
    return await GlobTool(searcher, **kw).run(GlobParams(pattern=pattern, path=path), call(cwd))


async def grep(searcher: Searcher, cwd: Path, pattern: str, **kw: Any) -> str:
    limit = kw.pop("limit", {})
    result = await GrepTool(searcher, **limit).run(GrepParams(pattern=pattern, **kw), call(cwd))
    assert result.raw_output == {"engine": searcher.name}
    return result.plain_text()


async def test_glob_lists_matches_newest_first_leaving_out_ignored_hidden_and_linked_files(
    searcher: Searcher, cwd: Path
) -> None:
    result = await glob(searcher, cwd, "**/*.py")
    assert result.plain_text() == "src/util.py\napp.py"
    assert result.raw_output == {"engine": searcher.name}


async def test_glob_reads_hidden_files_when_the_pattern_names_them_but_never_the_repository(
    searcher: Searcher, cwd: Path
) -> None:
    assert (await glob(searcher, cwd, ".github/*.yml")).plain_text() == ".github/ci.yml"
    # A pattern matching a directory matches what is in it (gitignore rules).
    assert (await glob(searcher, cwd, "**/.*")).plain_text() == ".github/ci.yml\n.gitignore\nvendor/.ignore"


async def test_glob_under_a_path_names_files_from_the_cwd_and_shows_them(searcher: Searcher, cwd: Path) -> None:
    context = call(cwd)
    result = await GlobTool(searcher).run(GlobParams(pattern="**/test_*.ts", path="src"), context)
    assert result.plain_text() == "src/web/test_view.ts"
    [shown] = logged(context, DISPLAY_EVENT)
    assert [location.path for location in shown.locations] == [str(cwd / "src/web/test_view.ts")]


async def test_glob_says_how_many_it_left_out(searcher: Searcher, cwd: Path) -> None:
    for n in range(5):
        touch(cwd / "many" / f"f{n}.txt", "", age=n)
    result = await glob(searcher, cwd, "many/*.txt", max_results=2)
    assert result.plain_text() == (
        "many/f0.txt\nmany/f1.txt\n[2 of 5 files shown, the newest; 3 left out: narrow the pattern or the path]"
    )


async def test_glob_refusals(searcher: Searcher, cwd: Path) -> None:
    assert (await glob(searcher, cwd, "*.zz")).plain_text() == "No files match *.zz under .."
    outside = await glob(searcher, cwd, "*", path="leakdir")
    assert outside.error is not None and outside.error.code == "outside_workspace"
    assert "through a symbolic link" in outside.error.message
    assert (await glob(searcher, cwd, "*", path="../outside")).error.code == "outside_workspace"  # type: ignore[union-attr]
    assert (await glob(searcher, cwd, "*", path="nope")).plain_text() == "Error: nope does not exist"
    assert (
        await glob(searcher, cwd, "*", path="app.py")
    ).plain_text() == "Error: app.py is a file: glob searches a directory"


async def test_grep_content_is_path_line_text_in_path_order(searcher: Searcher, cwd: Path) -> None:
    assert (
        await grep(searcher, cwd, r"def \w+\(")
        == "app.py:3:def handler(event):\nsrc/util.py:1:def helper():\nsrc/util.py:5:def handler():"
    )


async def test_grep_context_groups_are_separated_like_ripgreps(searcher: Searcher, cwd: Path) -> None:
    touch(cwd / "ctx.txt", "a\nhit 1\nb\nc\nd\ne\nhit 2\nhit 3\nf\n")
    assert await grep(searcher, cwd, "hit", context=1, glob="ctx.txt") == (
        "ctx.txt-1-a\nctx.txt:2:hit 1\nctx.txt-3-b\n--\nctx.txt-6-e\nctx.txt:7:hit 2\nctx.txt:8:hit 3\nctx.txt-9-f"
    )
    assert await grep(searcher, cwd, "handler", context=1, type="py") == (
        "app.py-2-\napp.py:3:def handler(event):\napp.py-4-    return event\n--\n"
        "src/util.py-4-\nsrc/util.py:5:def handler():\nsrc/util.py-6-    pass"
    )


async def test_grep_files_and_count_modes(searcher: Searcher, cwd: Path) -> None:
    assert (
        await grep(searcher, cwd, "handler", output_mode="files")
        == "app.py\nsrc/notes.md\nsrc/util.py\nsrc/web/test_view.ts"
    )
    assert await grep(searcher, cwd, "pass|handler", output_mode="count", path="src", glob="*.py") == "src/util.py:3"


async def test_grep_filters_and_case(searcher: Searcher, cwd: Path) -> None:
    assert (
        await grep(searcher, cwd, "HANDLER", ignore_case=True, type="ts")
        == "src/web/test_view.ts:1:export function handler() {}"
    )
    assert await grep(searcher, cwd, "HANDLER") == "No matches for HANDLER under .."
    assert await grep(searcher, cwd, "handler", glob=".github/*") == ".github/ci.yml:1:run: handler"
    assert await grep(searcher, cwd, "handler", path="src/notes.md") == "src/notes.md:1:# handler notes"
    assert await grep(searcher, cwd, "handler", path="blob.bin") == "No matches for handler under blob.bin."


async def test_grep_stops_at_head_limit_and_cuts_long_lines(searcher: Searcher, cwd: Path) -> None:
    touch(cwd / "many.txt", "".join(f"hit {n}\n" for n in range(10)) + "hit " + "x" * 600 + "\n")
    assert await grep(searcher, cwd, "hit", path="many.txt", head_limit=3) == (
        "many.txt:1:hit 0\nmany.txt:2:hit 1\nmany.txt:3:hit 2\n"
        "[8 more lines not shown: narrow the search (path, glob, type) or raise head_limit]"
    )
    long = (await grep(searcher, cwd, "x{600}", path="many.txt")).splitlines()
    assert long == ["many.txt:11:hit " + "x" * (500 - len("many.txt:11:hit ")) + "[... line cut]"]
    assert await grep(searcher, cwd, "hit", path="many.txt", limit={"head_limit": 1}) == (
        "many.txt:1:hit 0\n[10 more lines not shown: narrow the search (path, glob, type) or raise head_limit]"
    )


async def test_grep_refuses_a_bad_pattern_or_type_saying_why(searcher: Searcher, cwd: Path) -> None:
    text = await grep(searcher, cwd, "(unclosed")
    assert text.startswith("Error: the search could not run: regex parse error")
    typed = await grep(searcher, cwd, "x", type="nosuchtype")
    assert typed.startswith("Error: ") and "nosuchtype" in typed


async def test_outside_the_root_through_ignore_files_above_it(searcher: Searcher, cwd: Path) -> None:
    """A search below the repository's root still honours the .gitignore above it."""
    touch(cwd / "src" / "build" / "gen.py", "def handler(): pass\n")
    assert (
        await grep(searcher, cwd, "handler", path="src", output_mode="files")
        == "src/notes.md\nsrc/util.py\nsrc/web/test_view.ts"
    )


async def test_without_a_repository_gitignore_is_not_read(searcher: Searcher, tmp_path: Path) -> None:
    touch(tmp_path / "plain" / ".gitignore", "*.py\n")
    touch(tmp_path / "plain" / "a.py", "x\n")
    assert await grep(searcher, tmp_path / "plain", "x", output_mode="files") == "a.py"


def test_hidden_named() -> None:
    assert hidden_named(".github/**") and hidden_named("**/.env") and not hidden_named("**/*.py")
    assert not hidden_named(None) and not hidden_named("../x/*.py")


def test_the_ripgrep_binary_is_the_wheels_and_runs() -> None:
    assert RG is not None and RG.name == "rg"
    assert subprocess.run([RG, "--version"], capture_output=True, check=True).stdout.startswith(b"ripgrep ")
    assert isinstance(pick_searcher("auto", 1), RipgrepSearcher)
    assert isinstance(pick_searcher("python", 1), PythonSearcher)


def test_the_plugin_registers_both_tools(tmp_path: Path) -> None:
    ctx = compose(
        [
            Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path)}),
            Row(id="tools", name="acp_agent.tools.plugin"),
            Row(id="search", name="acp_agent.tools.search", config={"engine": "python"}),
        ]
    )
    registry: ToolRegistry = ctx.get(TOOLS)
    assert {tool.name for tool in registry.visible(None)} >= {"glob", "grep"}
