from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_agent.kernel import Context, Row, compose
from acp_agent.llm.service import STREAM


def rows(sessions: Path, model: Row, **agents: Any) -> list[Row]:
    return [
        Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(sessions)}),
        Row(id="llm", name="acp_agent.llm.service"),
        Row(id="tools", name="acp_agent.tools.plugin"),
        Row(id="agents", name="acp_agent.agent.plugin", config={"provider": "test", "model": "test", **agents}),
        Row(id="bash", name="acp_agent.tools.bash", config={"timeoutSeconds": 5}),
        model,
    ]


def spied(tmp_path: Path, script: Any, **agents: Any) -> tuple[Context, list[Any]]:
    """A context on the scripted model playing `script`, with every model request kept. The spy is
    registered before the model's row: the model owns every call it gets."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    model = Row(id="model", name="acp_agent.llm.scripted", config={"script": str(path)})
    base = rows(tmp_path / "sessions", model, **agents)
    requests: list[Any] = []

    async def spy(request: Any, next: Any) -> Any:
        requests.append(request)
        return await next()

    ctx = compose(base[:-1])
    ctx.events.on(STREAM, spy)
    compose(base[-1:], ctx)
    return ctx, requests


@pytest.fixture
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Context]:
    """A context whose model plays `script` (the scripted model's JSON format)."""
    monkeypatch.delenv("ACP_AGENT_SESSIONS", raising=False)

    def make(script: Any, **agents: Any) -> Context:
        path = tmp_path / "script.json"
        path.write_text(json.dumps(script))
        model = Row(id="model", name="acp_agent.llm.scripted", config={"script": str(path)})
        return compose(rows(tmp_path / "sessions", model, **agents))

    return make


@pytest.fixture
def replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Context]:
    """A context replaying a recorded scenario directory."""
    monkeypatch.delenv("ACP_AGENT_SESSIONS", raising=False)

    def make(fixtures: Path) -> Context:
        model = Row(id="model", name="acp_agent.llm.replay", config={"fixtures": str(fixtures)})
        return compose(rows(tmp_path / "sessions", model))

    return make
