"""A session's title: what `session/list` shows for it and what `session_info_update` sends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, NamedTuple

from acp_agent.kernel.models import Model
from acp_agent.session.content import ContentBlock, EmbeddedResource, ImageContent, ResourceLink, TextContent
from acp_agent.session.events import SessionEvent

TITLE_LENGTH = 80
"""A title is the session's first user message, whitespace collapsed, cut to this length; a title
set by the user or written by the model is cut to the same length."""
TITLE_EVENT: Final = "session/title"

TitleSource = Literal["user", "model"]
"""Who named the session: the user (`session/set_title`, `/rename`) or the model after the first
turn. The user's wins: once the user named it, a model's title is never logged."""


class TitleData(Model):
    title: str
    source: TitleSource


class TitleEvent(SessionEvent):
    """`session/title`: the session's name from here on (free: logged between turns or during one)."""

    type: Literal["session/title"] = TITLE_EVENT
    data: TitleData


class Titles(NamedTuple):
    """The titles a log gave its session so far; `shown` is the one a listing shows."""

    first_message: str | None = None
    user: str | None = None
    model: str | None = None

    @property
    def shown(self) -> str | None:
        return self.user or self.model or self.first_message

    def named(self, data: TitleData) -> Titles:
        return self._replace(user=data.title) if data.source == "user" else self._replace(model=data.title)


def one_line(text: str) -> str | None:
    """`text` as a title: whitespace collapsed to single spaces, cut to `TITLE_LENGTH` with `…`;
    None when nothing is left."""
    title = " ".join(text.split())
    if len(title) > TITLE_LENGTH:
        title = title[: TITLE_LENGTH - 1].rstrip() + "…"
    return title or None


def session_title(content: Sequence[ContentBlock]) -> str | None:
    """The text of a message (the names of its links and attached files when it has none), on one
    line, cut short with `…`; None when there is nothing to show."""
    words = " ".join(block.text for block in content if isinstance(block, TextContent)).split()
    words = words or " ".join(_name(block) for block in content if not isinstance(block, TextContent)).split()
    return one_line(" ".join(words))


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
