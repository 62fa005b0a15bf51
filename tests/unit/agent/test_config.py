"""The model and thought-level choices: offered models, the switch (logged, used by the next model
call and by children started later), levels following the model, and a loaded session starting
where its choices left it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from acp_agent.agent.config import ConfigData, ModelEntry, choose, offered
from acp_agent.agent.errors import AgentError, UnknownModel, UnknownThoughtLevel
from acp_agent.agent.keys import AGENTS
from acp_agent.session import LoadedSession, TextContent
from acp_agent.session.persistence import SESSIONS
from tests.unit.agent.conftest import spied

pytestmark = pytest.mark.anyio

MODELS = [{"id": "large", "name": "Large"}]
"""The agents row of `rows` runs on the model `test`, put first."""


def test_the_default_model_is_always_offered_first_when_the_list_lacks_it() -> None:
    listed = [ModelEntry(id="large")]
    assert offered("small", listed) == [ModelEntry(id="small"), ModelEntry(id="large")]
    assert offered("large", listed) == listed
    assert offered("small", []) == [ModelEntry(id="small")]


async def test_a_switch_is_logged_and_the_next_model_call_uses_it(tmp_path: Path) -> None:
    ctx, requests = spied(tmp_path, {"s1": [{"text": "a"}, {"text": "b"}]}, models=MODELS)
    async with ctx.running():
        assert [m.id for m in ctx.get(AGENTS).models] == ["test", "large"]
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        await agent.followup([TextContent(text="one")]).wait()
        with pytest.raises(UnknownModel, match="unknown model 'huge'; the models offered are 'test', 'large'"):
            choose(agent, "model", "huge")
        choose(agent, "model", "large")
        await agent.followup([TextContent(text="two")]).wait()
        assert agent.options.model == "large" and ctx.get(AGENTS).defaults.model == "test"
    assert [r.model for r in requests] == ["test", "large"]
    assert [e.data for e in agent.session.events if e.type == "session/config"] == [
        ConfigData(config_id="model", value="large")
    ]


async def test_a_loaded_session_starts_with_its_last_choice_still_offered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx, _ = spied(tmp_path, {}, models=MODELS)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        choose(agent, "model", "large")
        await agent.dispose()
        loaded = ctx.get(SESSIONS).load(agent.id)
        again = await ctx.get(AGENTS).restore(loaded)
        assert again.options.model == "large"
        await again.dispose()
        # A choice no longer offered is skipped, loudly: the one before it holds.
        gone = LoadedSession(loaded.header, [*loaded.events, *_choice(loaded, "retired")], False)
        with caplog.at_level(logging.WARNING):
            restored = await ctx.get(AGENTS).restore(gone)
        assert restored.options.model == "large"
        assert "chose the model 'retired', which is no longer offered; using 'large'" in caplog.text


def _choice(loaded: LoadedSession, value: str, config_id: str = "model") -> list[Any]:
    from acp_agent.agent.config import ConfigEvent

    return [ConfigEvent(seq=len(loaded.events), time=0, data=ConfigData(config_id=config_id, value=value))]


LEVELLED = [
    {"id": "test", "thoughtLevels": ["low", "high"]},
    {"id": "wide", "thoughtLevels": ["minimal", "low", "medium", "high"]},
    {"id": "plain"},
]


async def test_levels_follow_the_model_and_reach_the_request(tmp_path: Path) -> None:
    ctx, requests = spied(tmp_path, {"s1": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}, models=LEVELLED)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        assert agent.options.reasoning_effort == "low"  # the default model's first level
        await agent.followup([TextContent(text="one")]).wait()
        with pytest.raises(
            UnknownThoughtLevel, match="unknown thought level 'max' for the model 'test'; its levels are 'low', 'high'"
        ):
            choose(agent, "thought_level", "max")
        choose(agent, "thought_level", "high")
        choose(agent, "model", "wide")  # offers `high` too: kept
        await agent.followup([TextContent(text="two")]).wait()
        choose(agent, "model", "plain")  # no levels
        assert agent.options.reasoning_effort is None
        with pytest.raises(UnknownThoughtLevel, match="for the model 'plain'; it offers none"):
            choose(agent, "thought_level", "high")
        choose(agent, "model", "wide")  # nothing to keep: its first
        assert agent.options.reasoning_effort == "minimal"
        await agent.followup([TextContent(text="three")]).wait()
        with pytest.raises(AgentError, match="'temperature' is not a session option of the agent"):
            choose(agent, "temperature", "hot")
    assert [(r.model, r.reasoning_effort) for r in requests] == [("test", "low"), ("wide", "high"), ("wide", "minimal")]


async def test_a_loaded_session_applies_its_choices_again_in_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx, _ = spied(tmp_path, {}, models=LEVELLED)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        for config_id, value in [("thought_level", "high"), ("model", "plain"), ("model", "wide")]:
            choose(agent, config_id, value)
        await agent.dispose()
        loaded = ctx.get(SESSIONS).load(agent.id)
        again = await ctx.get(AGENTS).restore(loaded)
        assert (
            (again.options.model, again.options.reasoning_effort)
            == ("wide", "minimal")
            == (agent.options.model, agent.options.reasoning_effort)
        )
        await again.dispose()
        # A level the model no longer offers is skipped, loudly; another package's option quietly.
        odd = LoadedSession(loaded.header, [*loaded.events, *_choice(loaded, "max", "thought_level")], False)
        odd = LoadedSession(odd.header, [*odd.events, *_choice(odd, "on", "sound")], False)
        with caplog.at_level(logging.WARNING):
            restored = await ctx.get(AGENTS).restore(odd)
        assert restored.options.reasoning_effort == "minimal"
        assert "chose the thought level 'max', which 'wide' no longer offers; using 'minimal'" in caplog.text
        assert "sound" not in caplog.text
