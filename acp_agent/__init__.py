"""acp-agent: an Agent Client Protocol agent server with in-process subagents."""

from __future__ import annotations

__version__ = "0.1.0"
