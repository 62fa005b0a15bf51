"""What an agent runs with: which model, how long a turn may go."""

from __future__ import annotations

from acp_agent.kernel.models import Model


class AgentOptions(Model):
    """Per-agent settings; a child inherits its parent's unless the request overrides them."""

    provider: str
    model: str
    max_tokens: int | None = None
    max_steps: int = 50
    """Model calls one turn may make before it ends with `max-steps` (a runaway guard)."""
    reasoning_effort: str | None = None
    """The thought level requests carry (the adapter's `reasoningEffort` when None)."""
    context_window: int = 128000
    """The model's context window in tokens (DeepSeek's by default): how full the context is, as
    the editor shows it (`usage_update`), is measured against it."""
