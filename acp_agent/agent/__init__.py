"""Agents: the loop that runs turns and steps, the handle, the factory and the system prompt."""

from __future__ import annotations

from acp_agent.agent.agent import Agent, Ticket
from acp_agent.agent.factory import AgentFactory
from acp_agent.agent.options import AgentOptions
from acp_agent.agent.prompt import Section, SystemPrompt

__all__ = ["Agent", "AgentFactory", "AgentOptions", "Section", "SystemPrompt", "Ticket"]
