"""What the user reads of a compaction: the command's menu entry, its answers, the card's title.

The model-visible texts of a compaction (the request for a summary and the summary's framing)
are with the other texts the model reads in `acp_agent.llm.texts`.
"""

from __future__ import annotations

COMMAND_DESCRIPTION = "Summarize the conversation so far to free up the context window"
COMMAND_HINT = "what the summary should focus on (optional)"

NOTHING_TO_COMPACT = "Nothing to compact yet: there is no earlier conversation to summarize."
"""The answer to `/compact` in a thread with nothing before it (the model is not called)."""

CARD_TITLE = "Compact conversation"
"""The title of the tool card (kind `think`) that shows a compaction to a client without
`session.compaction`."""

CANCELLED = "Compaction cancelled: the conversation is unchanged."
"""The card's text when the compaction was cancelled."""

NO_SUMMARY = "the model wrote no summary"
"""Why a compaction failed when the summarization call answered no text."""


def repeated(count: int) -> str:
    """The agent's one-line message after the second and each later compaction of a thread."""
    return (
        f"This conversation has been compacted {count} times, and each compaction loses detail:"
        " for a fresh start, open a new thread."
    )
