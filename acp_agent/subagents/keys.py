"""The subagents' service keys, apart from the services (the driver installs tools that use them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from acp_agent.kernel.context import ServiceKey

if TYPE_CHECKING:
    from acp_agent.subagents.background import Background

BACKGROUND: Final = ServiceKey["Background"]("subagents/background")
"""`ctx.get(BACKGROUND)`: background children and their notices."""
