from __future__ import annotations

import base64

from mcp import types

from acp_agent.mcp import texts
from acp_agent.mcp.results import MAX_IMAGE_BYTES, TOOL_ERROR, convert
from acp_agent.tools.base import Image


def result(*content: object, structured: dict[str, object] | None = None, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), structuredContent=structured, isError=error)  # type: ignore[arg-type]


def test_every_kind_of_content_becomes_text_for_the_model() -> None:
    png = base64.b64encode(b"p" * 2048).decode()
    converted, images = convert(
        result(
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data=png, mimeType="image/png"),
            types.AudioContent(type="audio", data=base64.b64encode(b"a" * 20480).decode(), mimeType="audio/wav"),
            types.EmbeddedResource(
                type="resource", resource=types.TextResourceContents(uri="file:///a.txt", text="inside")
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="file:///b.bin", blob="AA==", mimeType="application/x"),
            ),
            types.ResourceLink(type="resource_link", uri="https://r/x", name="x"),
        ),
        1000,
    )
    assert converted.plain_text() == "\n".join(
        [
            "hello",
            "[image: image/png, 2.0 KB, shown to the user]",
            "[audio: audio/wav, 20 KB]",
            "inside",
            "[resource: file:///b.bin, application/x]",
            "[resource: https://r/x]",
        ]
    )
    assert images == [Image(data=png, mime_type="image/png")]
    assert converted.raw_output["content"][1]["data"] == "<2048 bytes>"
    assert not converted.is_error


def test_structured_content_is_text_when_the_server_sent_none() -> None:
    converted, _ = convert(result(structured={"temperature": 21}), 1000)
    assert converted.plain_text() == '{"temperature": 21}'
    with_text, _ = convert(result(types.TextContent(type="text", text="21 degrees"), structured={"t": 21}), 1000)
    assert with_text.plain_text() == "21 degrees"
    empty, _ = convert(result(), 1000)
    assert empty.plain_text() == "(no output)"


def test_long_output_is_cut_in_the_middle_and_an_error_fails_the_card() -> None:
    converted, _ = convert(result(types.TextContent(type="text", text="a" * 50 + "b" * 50), error=True), 40)
    assert converted.plain_text() == "a" * 20 + "\n[... 60 bytes of output omitted ...]\n" + "b" * 20
    assert converted.is_error and converted.error is not None and converted.error.code == TOOL_ERROR


def test_the_raw_output_is_bounded_like_the_models_copy() -> None:
    big = base64.b64encode(b"p" * (MAX_IMAGE_BYTES + 1)).decode()
    long_text = "a" * 50 + "b" * 50
    converted, images = convert(
        result(
            types.TextContent(type="text", text=long_text),
            types.EmbeddedResource(
                type="resource", resource=types.TextResourceContents(uri="file:///a.txt", text=long_text)
            ),
            types.ImageContent(type="image", data=big, mimeType="image/png"),
            structured={"rows": ["x" * 10] * 10},
        ),
        40,
    )
    cut = "a" * 20 + "\n[... 60 bytes of output omitted ...]\n" + "b" * 20
    content = converted.raw_output["content"]
    assert (content[0]["text"], content[1]["resource"]["text"]) == (cut, cut)
    assert converted.raw_output["structuredContent"] == "[structuredContent of 150 bytes not shown]"
    assert images == []  # too large for the card: the model reads that nobody was shown it
    assert content[2]["data"] == f"<{MAX_IMAGE_BYTES + 1} bytes>"
    alone, images = convert(result(types.ImageContent(type="image", data=big, mimeType="image/png")), 1000)
    assert (alone.plain_text(), images) == (
        f"[image: image/png, {round((MAX_IMAGE_BYTES + 1) / 1024)} KB, too large to show]",
        [],
    )


def test_texts_read_as_written() -> None:
    assert (
        texts.not_connected("git", "the server exited with code 1")
        == "MCP server git is not connected (the server exited with code 1)"
    )
    assert texts.could_not_start("git") == "MCP server git could not start"
    assert texts.timed_out("git", 30) == "MCP server git did not answer within 30 s"
    assert texts.call_timed_out(120) == "the MCP tool call did not finish within 120 s"
    assert texts.exited(None) == "the server exited"
    assert texts.stderr_tail(["a", "b"]) == "; its last stderr lines: a | b"
