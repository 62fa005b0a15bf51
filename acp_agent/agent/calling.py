"""The agent a tool call is made by, as the `Agent` it is."""

from __future__ import annotations

from acp_agent.agent.agent import Agent
from acp_agent.tools.base import CallingAgent, ToolCallContext


def calling_agent(call: ToolCallContext) -> Agent:
    """The agent making `call`, narrowed from the tools' view of it (`CallingAgent`) to the
    `Agent` it is: for a tool or service above this package that passes the caller on as an
    agent (a child's parent, the approval gate cancelling a turn)."""
    return as_agent(call.agent)


def as_agent(caller: CallingAgent) -> Agent:
    """`caller` as the `Agent` it is (a tool call's maker, the agent a `tools.base` event names).
    Only agents' loops make calls and dispatch those events, so anything else is a bug
    (TypeError)."""
    if not isinstance(caller, Agent):
        raise TypeError(f"a tool call made by {type(caller).__name__}, not by an agent")
    return caller
