"""Every text the model reads that nobody logged as such, verbatim, in one place (the tests hold
them to these strings): how an adapter writes content that is not plain text, and the two texts
of a compaction (the request for a summary, and the framing the summary has in the history)."""

from __future__ import annotations

UNKNOWN_MIME_TYPE = "application/octet-stream"
"""The type a blob without a `mimeType` is described with."""


def resource_text(uri: str, text: str) -> str:
    """An embedded text resource (a file the user attached): its contents, headed by its URI and
    closed, so the user's words after it do not read as part of the file."""
    return f"[resource {uri}]\n{text}\n[end of resource {uri}]"


def data_size(size: int) -> str:
    """A size in bytes as the model reads it: in bytes under 1 KB (1024 bytes), else in KB, with
    one decimal under 10 KB."""
    if size < 1024:
        return f"{size} byte{'' if size == 1 else 's'}"
    return f"{size / 1024:.1f} KB" if size < 10 * 1024 else f"{round(size / 1024)} KB"


def resource_blob(uri: str, mime_type: str | None, size: int) -> str:
    """An embedded binary resource, described: the model is not sent the bytes."""
    return f"[resource {uri}: {mime_type or UNKNOWN_MIME_TYPE}, {data_size(size)}]"


def resource_link(uri: str, name: str) -> str:
    """A link the user attached (`resource_link`): its name and where it points."""
    return f"[@{name}]({uri})"


def image_omitted(mime_type: str) -> str:
    """An image sent to a model that does not take images (one chosen after it was attached)."""
    return f"[image omitted: {mime_type}]"


def tool_images(call_id: str) -> str:
    """Heads the images of a tool result, sent in a user message after the tool messages (an
    OpenAI-compatible tool message carries text only)."""
    return f"[The image(s) returned by tool call {call_id}:]"


SUMMARIZATION_PROMPT = (
    "Stop here: this conversation no longer fits the context window, and it is about to be "
    "replaced by a summary that you write now. Another instance of you will carry on the work "
    "from that summary, with nothing else of the conversation before it in view. Write down: the "
    "user's requests and goals (in their own words where the wording matters); the decisions "
    "taken and why; what was done, with the files read, created or changed and the commands run, "
    "and what came of them; errors met and how they were resolved; what is still open, and the "
    "next step. Keep exact names, paths, identifiers, values and commands. Leave out what no "
    "longer matters. Do not call any tool: answer with the summary alone."
)
"""The user message that ends a summarization request (after the history it summarizes)."""


def summarization_prompt(focus: str | None) -> str:
    """The summarization request's last message: the prompt, and the focus `/compact` was given."""
    return f"{SUMMARIZATION_PROMPT}\n\nFocus the summary on: {focus}" if focus else SUMMARIZATION_PROMPT


SUMMARY_HEADING = (
    "The earlier part of this conversation was compacted to fit the context window. This is the "
    "summary written for you to carry on from; the user's most recent messages, and everything "
    "after the compaction, follow as they were."
)


def framed_summary(summary: str) -> str:
    """A compaction's summary as the history's first user message."""
    return f"{SUMMARY_HEADING}\n\n{summary}"
