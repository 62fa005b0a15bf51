"""Stored content blocks (a user's message, a task) as ACP content."""

from __future__ import annotations

from acp_agent.acp.schema import (
    BlobResourceContents,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
    TextResourceContents,
)
from acp_agent.session.content import ContentBlock, ImageContent, TextContent
from acp_agent.session.content import EmbeddedResource as StoredResource
from acp_agent.session.content import TextResourceContents as StoredText

_LINK_EXTRAS: dict[str, type] = {"title": str, "description": str, "mimeType": str, "size": int}


def wire_content(block: ContentBlock) -> Text | ResourceLink | EmbeddedResource | Image:
    """A stored user content block as ACP content (a link keeps the optional fields ACP knows)."""
    if isinstance(block, TextContent):
        return Text(text=block.text)
    if isinstance(block, ImageContent):
        return Image(data=block.data, mime_type=block.mime_type, uri=block.uri)
    if isinstance(block, StoredResource):
        stored = block.resource
        resource: TextResourceContents | BlobResourceContents
        if isinstance(stored, StoredText):
            resource = TextResourceContents(uri=stored.uri, text=stored.text, mime_type=stored.mime_type)
        else:
            resource = BlobResourceContents(uri=stored.uri, blob=stored.blob, mime_type=stored.mime_type)
        return EmbeddedResource(resource=resource)
    dumped = block.dump()
    extras = {
        key: value
        for key, value in dumped.items()
        if isinstance(value, _LINK_EXTRAS.get(key, ())) and not isinstance(value, bool)
    }
    return ResourceLink.model_validate({"uri": block.uri, "name": block.name, **extras})
