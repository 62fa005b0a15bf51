"""A session's title: what `session/list` shows for it and what `session_info_update` sends."""

from __future__ import annotations

from collections.abc import Sequence

from acp_agent.session.content import ContentBlock, EmbeddedResource, ImageContent, ResourceLink, TextContent

TITLE_LENGTH = 80
"""A title is the session's first user message, whitespace collapsed, cut to this length."""


def session_title(content: Sequence[ContentBlock]) -> str | None:
    """The text of a message (the names of its links and attached files when it has none), on one
    line, cut short with `…`; None when there is nothing to show."""
    words = " ".join(block.text for block in content if isinstance(block, TextContent)).split()
    words = words or " ".join(_name(block) for block in content if not isinstance(block, TextContent)).split()
    title = " ".join(words)
    if len(title) > TITLE_LENGTH:
        title = title[: TITLE_LENGTH - 1].rstrip() + "…"
    return title or None


def _name(block: ResourceLink | EmbeddedResource | ImageContent) -> str:
    """A link's name; an attached file's or image's, the last segment of its URI (an image
    without one has no name)."""
    if isinstance(block, ResourceLink):
        return block.name
    uri = block.resource.uri if isinstance(block, EmbeddedResource) else block.uri or ""
    return uri.rstrip("/").rsplit("/", 1)[-1]


def brief(text: str, limit: int) -> str:
    """`text` when it has at most `limit` characters, else its first `limit` cut back to the last
    whole word, with `…`."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if not text[limit].isspace() and any(char.isspace() for char in cut):
        cut = cut[: max(i for i, char in enumerate(cut) if char.isspace())]
    return cut.rstrip() + "…"
