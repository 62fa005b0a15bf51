"""The typed seams hold for the type checker: mypy accepts a listener of an event's type and an
event's own data, and refuses the others (what a string name and an untyped payload let through)."""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[3]

CODE = """
from collections.abc import Awaitable

from acp_agent.agent.agent import Agent
from acp_agent.agent.factory import PUBLISHED
from acp_agent.agent.loop import TURN_ENDED
from acp_agent.kernel import Context, Next
from acp_agent.llm.request import LlmRequest
from acp_agent.llm.service import STREAM, ModelStream
from acp_agent.session.events import StepData, StepEndEvent, TurnDisposed, TurnEndData, TurnEndEvent, TurnEndReason
from acp_agent.session.log import Session


async def uses(ctx: Context, session: Session, agent: Agent, request: LlmRequest) -> None:
    def published(agent: Agent) -> None: ...
    def wrong(agent: int) -> None: ...
    async def ended(agent: Agent, reason: TurnEndReason) -> None: ...
    async def adapter(request: LlmRequest, next: Next[ModelStream]) -> ModelStream: return await next()

    ctx.events.on(PUBLISHED, published)
    ctx.events.on(PUBLISHED, wrong)  # rejected
    ctx.events.on(TURN_ENDED, ended)
    ctx.events.on(TURN_ENDED, published)  # rejected
    ctx.events.on(STREAM, adapter)
    ctx.events.emit(PUBLISHED, agent)
    ctx.events.emit(PUBLISHED, "agent")  # rejected
    stream: ModelStream = await ctx.events.waterfall(STREAM, request)
    await ctx.events.waterfall(STREAM, "a request")  # rejected
    session.append(StepEndEvent, StepData(turn=1, step=1))
    session.append(TurnEndEvent, TurnEndData(turn=1, reason=TurnDisposed()))
    session.append(StepEndEvent, TurnEndData(turn=1, reason=TurnDisposed()))  # rejected
"""


def test_mypy_refuses_a_listener_or_data_of_another_event_and_accepts_their_own(tmp_path: Path) -> None:
    module = tmp_path / "seams.py"
    module.write_text(CODE)
    out, err, status = api.run(
        [str(module), "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache")]
    )
    rejected = {i for i, line in enumerate(CODE.splitlines(), 1) if line.endswith("# rejected")}
    found = {int(line) for line in re.findall(rf"^{re.escape(str(module))}:(\d+): error:", out, re.M)}
    assert (found, err) == (rejected, ""), out
    assert status == 1
