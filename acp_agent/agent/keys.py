"""The agent package's service keys, in a module of their own: `config` and `factory` both use
`AGENTS`, and `factory` imports `config`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from acp_agent.kernel.context import ServiceKey

if TYPE_CHECKING:
    from acp_agent.agent.factory import AgentFactory
    from acp_agent.agent.loop import Compaction, TurnHooks
    from acp_agent.agent.prompt import SystemPrompt

AGENTS: Final[ServiceKey[AgentFactory]] = ServiceKey("agents")
"""The agent factory and the published agents."""
PROMPT: Final[ServiceKey[SystemPrompt]] = ServiceKey("prompt")
"""The system prompt sections."""
COMPACTION: Final[ServiceKey[Compaction]] = ServiceKey("compaction")
"""Context compaction, which the loop asks before each model call and on an overflow (provided
by the compaction plugin: `acp_agent.compaction`)."""
TURN_HOOKS: Final[ServiceKey[TurnHooks]] = ServiceKey("turn_hooks")
"""What runs around a model turn's steps (a prompt's check before them, a stop's after them),
provided by the hooks plugin (`acp_agent.hooks`)."""
