"""Output that does not fit: a command's whole output kept in the session's scratch directory
(bounded: the middle dropped past the limit), named in the answer, readable by read_file and grep
although it is outside the cwd, and gone (said so) once the session closed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_agent.tools import BashParams, BashTool, ReadFileParams, ReadFileTool
from acp_agent.tools.overflow import Overflow
from acp_agent.tools.pysearch import PythonSearcher
from acp_agent.tools.search import GrepParams, GrepTool

from .helpers import logged_call

pytestmark = pytest.mark.anyio


def test_an_overflow_file_keeps_everything_up_to_its_limit(tmp_path: Path) -> None:
    overflow = Overflow(tmp_path, limit=20)
    for piece in (b"0123456789", b"abcdefghij"):
        overflow.write(piece)
    overflow.close()
    assert overflow.path.read_bytes() == b"0123456789abcdefghij" and overflow.total == 20


def test_past_its_limit_the_middle_is_dropped_and_said_so(tmp_path: Path) -> None:
    overflow = Overflow(tmp_path, limit=10)
    for piece in (b"HEAD", b"h", b"0123456789", b"abcdefg", b"TAIL!"):
        overflow.write(piece)
    overflow.close()
    note = b"\n[... 17 bytes dropped here: the file keeps the first and the last 32 MiB ...]\n"
    assert overflow.path.read_bytes() == b"HEADh" + note + b"fgTAIL!"[-5:]
    assert overflow.total == 27
    assert [p.name for p in tmp_path.iterdir()] == [overflow.path.name]  # the ring is gone


def test_a_ring_filled_exactly_comes_back_in_order(tmp_path: Path) -> None:
    overflow = Overflow(tmp_path, limit=4)
    overflow.write(b"ab" + b"cd" + b"ef")
    overflow.close()
    assert (
        overflow.path.read_bytes()
        == b"ab\n[... 2 bytes dropped here: the file keeps the first and the last 32 MiB ...]\nef"
    )


async def test_a_long_output_is_kept_whole_and_read_back_until_the_session_closes(tmp_path: Path) -> None:
    call = logged_call(tmp_path)
    result = await BashTool(max_output_bytes=100).run(BashParams(command="seq 1 2000"), call)
    text = result.plain_text()
    found = re.search(
        (
            r"\[\.\.\. (\d+) bytes of output omitted here; all (\d+) bytes are in (\S+): "
            r"read_file \(offset, limit\) or grep it \.\.\.\]"
        ),
        text,
    )
    assert found is not None, text
    path = Path(found[3])
    assert int(found[2]) == len("".join(f"{n}\n" for n in range(1, 2001)))
    assert path.read_text() == "".join(f"{n}\n" for n in range(1, 2001))
    assert text.startswith("1\n2\n3\n") and text.endswith("1999\n2000\n")
    assert not path.is_relative_to(tmp_path)

    read = await ReadFileTool().run(ReadFileParams(path=str(path), offset=1500, limit=2), call)
    assert read.plain_text() == "  1500\t1500\n  1501\t1501\n[lines 1500-1501; more follow: continue with offset 1502]"
    grep = await GrepTool(PythonSearcher(10)).run(GrepParams(pattern="^1234$", path=str(path)), call)
    assert grep.plain_text() == f"{path}:1234:1234"
    other = logged_call(tmp_path)  # another session: not its file
    refused = await ReadFileTool().run(ReadFileParams(path=str(path)), other)
    assert refused.error is not None and refused.error.code == "outside_workspace"

    call.scope.dispose()
    gone = await ReadFileTool().run(ReadFileParams(path=str(path)), call)
    assert (
        gone.plain_text() == f"Error: {path} is gone: a session's temporary files are removed when the session closes"
    )
    grep_gone = await GrepTool(PythonSearcher(10)).run(GrepParams(pattern="x", path=str(path)), other)
    assert grep_gone.error is not None and grep_gone.error.code == "not_found"
