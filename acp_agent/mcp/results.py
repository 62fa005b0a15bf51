"""From an MCP `tools/call` result to the agent's tool result, the card's images and `rawOutput`.

What the model reads is text: text content as it is, an image as a note (the image itself goes on
the card), an embedded resource's text (a binary one as a note), a resource link and
`structuredContent` (when the server sent no text) as text. The whole is cut in the middle past
`maxOutputBytes`, as bash output is. What the card and the log keep is bounded the same way: each
text of the `rawOutput` is cut past `maxOutputBytes`, a `structuredContent` larger than that is a
note, and an image larger than `MAX_IMAGE_BYTES` is not shown (the model reads that it was not).
Uses the SDK's types: loaded with `connection.py` only.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from acp_agent.mcp import texts
from acp_agent.mcp.sdk import types
from acp_agent.session.content import TextContent
from acp_agent.session.events import ToolError
from acp_agent.tools.base import Image, ToolResult
from acp_agent.tools.bash import cut_middle

TOOL_ERROR = "mcp_tool_error"
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""The largest image a result shows on its card (a prompt's attachments have the same default)."""


def convert(result: types.CallToolResult, max_output_bytes: int) -> tuple[ToolResult, list[Image]]:
    """The tool result (text for the model, `rawOutput`) and the images to show on the card."""
    parts: list[str] = []
    images: list[Image] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent):
            size = _decoded_size(block.data)
            if size > MAX_IMAGE_BYTES:
                parts.append(texts.image_not_shown(block.mimeType, size))
                continue
            images.append(Image(data=block.data, mime_type=block.mimeType))
            parts.append(texts.image_note(block.mimeType, size))
        elif isinstance(block, types.AudioContent):
            parts.append(texts.binary_note("audio", block.mimeType, _decoded_size(block.data)))
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(texts.resource_note(str(resource.uri), resource.mimeType))
        else:  # a resource link
            parts.append(texts.resource_note(str(block.uri), block.mimeType))
    if result.structuredContent is not None and not any(
        isinstance(block, types.TextContent) for block in result.content
    ):
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    text = cut_middle("\n".join(parts), max_output_bytes) or "(no output)"
    raw = raw_output(result, max_output_bytes)
    if result.isError:
        error = ToolError(code=TOOL_ERROR, message="the MCP tool reported an error")
        return ToolResult(content=[TextContent(text=text)], is_error=True, error=error, raw_output=raw), images
    return ToolResult(content=[TextContent(text=text)], raw_output=raw), images


def raw_output(result: types.CallToolResult, max_output_bytes: int) -> dict[str, Any]:
    """The result as the server sent it, for the card's `rawOutput`, bounded like the model's
    copy: binary data left out (the card shows the images; the model and the log need no second
    copy), each text cut in the middle past `max_output_bytes`, a larger `structuredContent` a
    note of its size."""
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    for block in dumped.get("content", []):
        if block.get("type") in ("image", "audio") and isinstance(block.get("data"), str):
            block["data"] = f"<{_decoded_size(block['data'])} bytes>"
        for holder in (block, block.get("resource")):
            if isinstance(holder, dict) and isinstance(holder.get("text"), str):
                holder["text"] = cut_middle(holder["text"], max_output_bytes)
    if "structuredContent" in dumped:
        size = len(json.dumps(dumped["structuredContent"], ensure_ascii=False).encode("utf-8", "replace"))
        if size > max_output_bytes:
            dumped["structuredContent"] = texts.not_shown("structuredContent", size)
    return dumped


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)
