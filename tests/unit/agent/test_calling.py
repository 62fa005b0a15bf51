"""`calling_agent`: the tools' view of a caller narrowed back to the `Agent` it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from acp_agent.agent.calling import calling_agent
from acp_agent.kernel import Context, Scope
from acp_agent.session import Session, SessionHeader, default_registry
from acp_agent.tools.base import ToolCallContext


@dataclass(frozen=True)
class Options:
    model: str = "m"


@dataclass(eq=False)
class Stranger:
    """Something with every member a tool reads of its caller, that is not an agent."""

    route: str = "s1"
    session: Session = field(
        default_factory=lambda: Session(SessionHeader(id="x", created_at=0), registry=default_registry())
    )
    scope: Scope = field(default_factory=Scope)
    ctx: Context = field(default_factory=Context)
    options: Options = field(default_factory=Options)

    @property
    def id(self) -> str:
        return self.session.id


def test_a_call_made_by_something_that_is_not_an_agent_is_a_type_error() -> None:
    call = ToolCallContext(call_id="c1", cwd=Path("/"), agent=Stranger())
    assert call.route == "s1" and call.session.id == "x"  # the tools' view of it holds
    with pytest.raises(TypeError, match="^a tool call made by Stranger, not by an agent$"):
        calling_agent(call)
