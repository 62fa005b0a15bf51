"""read_image: confined like read_file, typed by its first bytes, for vision models only."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from acp_agent.agent.config import ModelEntry
from acp_agent.agent.factory import AgentFactory
from acp_agent.agent.keys import AGENTS
from acp_agent.agent.options import AgentOptions
from acp_agent.kernel import Row, compose
from acp_agent.session.content import ImageContent, TextContent
from acp_agent.tools import ToolCallContext, ToolPresentation, ToolResult
from acp_agent.tools.images import ReadImageParams, ReadImageTool, image_type
from acp_agent.tools.registry import TOOLS

from .helpers import logged, logged_call

pytestmark = pytest.mark.anyio

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


async def look(
    cwd: Path, path: str, *, vision: bool = True, tool: ReadImageTool | None = None
) -> tuple[ToolResult, ToolCallContext]:
    call = logged_call(cwd)
    call.ctx.provide(
        AGENTS,
        AgentFactory(call.ctx, AgentOptions(provider="test", model="test"), [ModelEntry(id="test", vision=vision)]),
    )
    return await (tool or ReadImageTool()).run(ReadImageParams(path=path), call), call


def refused(result: ToolResult, code: str, message: str) -> None:
    assert result.is_error and result.error is not None
    assert (result.error.code, result.error.message) == (code, message)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (PNG[:12], "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01", "image/jpeg"),
        (b"GIF87a\x01\x00\x01\x00\x00\x00", "image/gif"),
        (b"GIF89a\x01\x00\x01\x00\x00\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBP", "image/webp"),
        (b"RIFF\x24\x00\x00\x00WAVE", None),
        (b"\x89PNG", None),
        (b"", None),
    ],
)
def test_the_type_is_told_by_the_first_bytes(head: bytes, expected: str | None) -> None:
    assert image_type(head) == expected


async def test_an_image_comes_back_after_a_line_of_text_and_shows_on_the_card(tmp_path: Path) -> None:
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "dot.txt").write_bytes(PNG)  # the name says text; the bytes say PNG
    result, call = await look(tmp_path, "pics/dot.txt")
    data = base64.b64encode(PNG).decode()
    assert result.content == [
        TextContent(text=f"pics/dot.txt: image/png, {len(PNG)} bytes"),
        ImageContent(data=data, mime_type="image/png"),
    ]
    assert not result.is_error
    [shown] = [display.dump() for display in logged(call, "tool/display")]
    assert shown["images"] == [{"data": data, "mimeType": "image/png"}]
    assert shown["locations"] == [{"path": str(tmp_path / "pics" / "dot.txt")}]


async def test_refusals_name_the_model_the_file_and_the_limit(tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    (tmp_path / "notes.png").write_text("not an image\n")
    result, call = await look(tmp_path, "dot.png", vision=False)
    refused(
        result,
        "no_vision",
        (
            "the model test does not take images (its models entry does not declare vision: true), "
            "so read_image cannot show you one"
        ),
    )
    assert logged(call, "tool/display") == []
    refused(
        (await look(tmp_path, "notes.png"))[0],
        "not_an_image",
        "notes.png is not a PNG, JPEG, GIF or WebP image (told by its first bytes)",
    )
    small = ReadImageTool(max_bytes=len(PNG) - 1)
    refused(
        (await look(tmp_path, "dot.png", tool=small))[0],
        "too_large",
        f"dot.png is {len(PNG)} bytes, more than read_image takes ({len(PNG) - 1} bytes)",
    )
    assert (await look(tmp_path, "dot.png", tool=ReadImageTool(max_bytes=len(PNG))))[0].is_error is False
    os.mkfifo(tmp_path / "fifo.png")  # refused, never waited on
    for path, code in (("../secret.png", "outside_workspace"), ("missing.png", "not_found"), ("fifo.png", "io_error")):
        outside = (await look(tmp_path, path))[0].error
        assert outside is not None and outside.code == code


async def test_without_an_agents_service_no_model_takes_images(tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    call = logged_call(tmp_path)
    result = await ReadImageTool().run(ReadImageParams(path="dot.png"), call)
    assert result.error is not None and result.error.code == "no_vision"


def test_the_row_registers_read_image_with_its_limit_and_the_card_title(tmp_path: Path) -> None:
    ctx = compose(
        [
            Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path)}),
            Row(id="tools", name="acp_agent.tools.plugin"),
            Row(id="images", name="acp_agent.tools.images", config={"maxBytes": 1024}),
        ]
    )
    [tool] = ctx.get(TOOLS).visible(None)
    assert isinstance(tool, ReadImageTool) and tool.max_bytes == 1024
    assert "of at most 1024 bytes," in tool.description
    assert "of at most 5.0 MiB," in ReadImageTool().description
    assert tool.present(ReadImageParams(path="a.png")) == ToolPresentation(title="Read image a.png", kind="read")
    ctx.scope.dispose()
