"""Every text a model adapter writes into the conversation for content that is not plain text,
verbatim, in one place (the tests hold them to these strings)."""

from __future__ import annotations

UNKNOWN_MIME_TYPE = "application/octet-stream"
"""The type a blob without a `mimeType` is described with."""


def resource_text(uri: str, text: str) -> str:
    """An embedded text resource (a file the user attached): its contents, headed by its URI and
    closed, so the user's words after it do not read as part of the file."""
    return f"[resource {uri}]\n{text}\n[end of resource {uri}]"


def resource_blob(uri: str, mime_type: str | None, size: int) -> str:
    """An embedded binary resource, described: the model is not sent the bytes. The size is in
    whole KB (1024 bytes), at least 1."""
    return f"[resource {uri}: {mime_type or UNKNOWN_MIME_TYPE}, {max(1, round(size / 1024))} KB]"


def resource_link(uri: str, name: str) -> str:
    """A link the user attached (`resource_link`): its name and where it points."""
    return f"[@{name}]({uri})"


def image_omitted(mime_type: str) -> str:
    """An image sent to a model that does not take images (one chosen after it was attached)."""
    return f"[image omitted: {mime_type}]"
