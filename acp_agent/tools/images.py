"""The `read_image` tool: an image file of the workspace, for a model that takes images.

The path is confined like read_file's (the cwd, or the session's scratch directory). The type is
told by the file's first bytes, never by its name; the file is read from the disk (the workspace
service serves text). The result holds the image as an `image` block after a line of text, and
the card shows it; a model whose entry does not declare `vision: true` gets an error naming it.
"""

from __future__ import annotations

import base64

import anyio
from pydantic import Field

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.session.content import ImageContent, TextContent
from acp_agent.tools import texts
from acp_agent.tools.base import Image, Location, ToolCallContext, ToolPresentation, ToolResult
from acp_agent.tools.confined import Target, read_head
from acp_agent.tools.files import FileTool, PathParams, resolve_for_reading
from acp_agent.tools.registry import TOOLS
from acp_agent.tools.workspace import Workspace

MAX_BYTES = 5 * 1024 * 1024
"""The largest image read_image takes by default (5 MB)."""

_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(head: bytes) -> str | None:
    """The image type a file's first bytes say it is (`session.content.IMAGE_TYPES`), or None."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for signature, mime in _SIGNATURES if head.startswith(signature)), None)


class ReadImageParams(PathParams):
    """Arguments of read_image."""


class ReadImageTool(FileTool[ReadImageParams]):
    """Returns an image file for the model to see, and shows it on the card."""

    name = "read_image"
    Params = ReadImageParams
    concurrency_safe = True
    reads_scratch = True

    def resolve(self, call: ToolCallContext, path: str) -> tuple[Target, bool]:
        return resolve_for_reading(call, path)

    def __init__(self, *, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.description = texts.image_description(max_bytes)

    async def run(self, params: ReadImageParams, call: ToolCallContext) -> ToolResult:
        if not call.agent.takes_images:
            return ToolResult.failure(texts.no_vision(call.agent.options.model), "no_vision")
        return await super().run(params, call)

    async def run_on(
        self, target: Target, params: ReadImageParams, workspace: Workspace, call: ToolCallContext
    ) -> ToolResult:
        # Never more than the limit in memory; a FIFO or a device is refused, not waited on.
        data, size = await anyio.to_thread.run_sync(read_head, target, self.max_bytes + 1)
        if len(data) > self.max_bytes:
            return ToolResult.failure(texts.image_too_large(target.shown, size, self.max_bytes), "too_large")
        mime_type = image_type(data[:12])
        if mime_type is None:
            return ToolResult.failure(texts.not_an_image(target.shown), "not_an_image")
        encoded = base64.b64encode(data).decode("ascii")
        call.show(locations=[Location(path=str(target.path))], images=[Image(data=encoded, mime_type=mime_type)])
        return ToolResult(
            content=[
                TextContent(text=texts.image_read(target.shown, mime_type, len(data))),
                ImageContent(data=encoded, mime_type=mime_type),
            ]
        )

    def present(self, params: ReadImageParams) -> ToolPresentation:
        return ToolPresentation(title=f"Read image {params.path}", kind="read")


# The plugin: module attributes, as the loader expects.
name = "images"
inject = ("tools",)


class Config(PluginConfig):
    """Configuration of the `images` plugin row."""

    max_bytes: int = Field(default=MAX_BYTES, gt=0)
    """The largest image read_image takes."""


def apply(ctx: Context, config: Config) -> Disposer:
    """Register read_image for every agent."""
    return ctx.get(TOOLS).register(ReadImageTool(max_bytes=config.max_bytes))
