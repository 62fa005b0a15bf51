"""What an agent runs with: which model, how long a turn may go."""

from __future__ import annotations

from pydantic import Field

from acp_agent.kernel.models import Model


class AgentDefaults(Model):
    """The options a deployment sets for its agents: the agents row's config is these fields (and
    their defaults, which are the only ones) plus its own."""

    provider: str = "deepseek"
    """The provider a model call names: the adapter row serving it (`openai_compat`'s `provider`)."""
    model: str = "deepseek-flash"
    max_tokens: int | None = None
    max_steps: int = 50
    """Model calls one turn may make before it ends with `max-steps` (a runaway guard)."""
    context_window: int = Field(default=128000, gt=0)
    """The model's context window in tokens (by default less than DeepSeek's current model's):
    how full the context is, as the editor shows it (`usage_update`), is measured against it."""


class AgentOptions(AgentDefaults):
    """Per-agent settings; a child inherits its parent's unless the request overrides them."""

    reasoning_effort: str | None = None
    """The thought level requests carry (the adapter's `reasoningEffort` when None); chosen per
    session, not by the deployment."""
