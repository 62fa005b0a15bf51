"""Context compaction: a thread that fills the model's context window goes on from a summary of
its history, automatically, after an overflow, or on `/compact [focus]`."""

from __future__ import annotations

from acp_agent.compaction.compactor import Compactor
from acp_agent.compaction.history import Plan, content_chars, estimate, history_tokens, plan, without_oldest

__all__ = ["Compactor", "Plan", "content_chars", "estimate", "history_tokens", "plan", "without_oldest"]
