"""Whether a session may run what its project configures (hooks, MCP servers, allow rules)."""

from acp_agent.trust.service import TRUST, Trust, TrustAnswer, TrustAsker, TrustItem, TrustQuestion
from acp_agent.trust.store import TrustStore

__all__ = ["TRUST", "Trust", "TrustAnswer", "TrustAsker", "TrustItem", "TrustQuestion", "TrustStore"]
