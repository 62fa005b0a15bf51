"""The deployment's limits for MCP servers (the plugin row's config, in seconds and bytes)."""

from __future__ import annotations

from pydantic import Field

from acp_agent.kernel.plugin import PluginConfig


class Limits(PluginConfig):
    """The `acp_agent.mcp.plugin` row's config."""

    startup_timeout: float = Field(default=30, gt=0)
    """Seconds a server may take to start and list its tools (the first model call waits as long)."""
    call_timeout: float = Field(default=120, gt=0)
    """Seconds one tool call may take."""
    max_output_bytes: int = Field(default=30000, gt=0)
    """What the model reads of a result, at most (cut in the middle past it)."""
    trust_read_only_hint: bool = False
    """Let tools the server annotates `readOnlyHint` run without asking (and in plan mode)."""
