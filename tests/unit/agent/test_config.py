"""The model choice: offered models, the switch (logged, used by the next model call and by
children started later), and a loaded session starting with its last choice."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from acp_agent.agent.config import ConfigData, ModelEntry, choose_model, chosen, offered
from acp_agent.agent.errors import UnknownModel
from acp_agent.session import LoadedSession, TextContent
from acp_agent.agent.keys import AGENTS
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
            choose_model(agent, "huge")
        choose_model(agent, "large")
        await agent.followup([TextContent(text="two")]).wait()
        assert agent.options.model == "large" and ctx.get(AGENTS).defaults.model == "test"
    assert [r.model for r in requests] == ["test", "large"]
    assert [e.data for e in agent.session.events if e.type == "session/config"] == [ConfigData(config_id="model", value="large")]
    assert chosen(agent.session.events, "model") == "large" and chosen(agent.session.events, "other") is None


async def test_a_loaded_session_starts_with_its_last_choice_while_it_is_offered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx, _ = spied(tmp_path, {}, models=MODELS)
    async with ctx.running():
        agent = await ctx.get(AGENTS).create(cwd=str(tmp_path))
        choose_model(agent, "large")
        await agent.dispose()
        loaded = ctx.get(SESSIONS).load(agent.id)
        again = await ctx.get(AGENTS).create(cwd=None, loaded=loaded)
        assert again.options.model == "large"
        await again.dispose()
        # A choice equal to the default changes nothing; one no longer offered is ignored, loudly.
        back = LoadedSession(loaded.header, [*loaded.events, *_choice(loaded, "test")], False)
        same = await ctx.get(AGENTS).create(cwd=None, loaded=back)
        assert same.options.model == "test"
        await same.dispose()
        gone = LoadedSession(loaded.header, [*loaded.events, *_choice(loaded, "retired")], False)
        with caplog.at_level(logging.WARNING):
            restored = await ctx.get(AGENTS).create(cwd=None, loaded=gone)
        assert restored.options.model == "test"
        assert "chose the model 'retired', which is no longer offered; using 'test'" in caplog.text


def _choice(loaded: LoadedSession, model: str) -> list[Any]:
    from acp_agent.agent.config import ConfigEvent

    return [ConfigEvent(seq=len(loaded.events), time=0, data=ConfigData(config_id="model", value=model))]
