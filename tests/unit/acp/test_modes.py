"""Session modes and config options in process: what a session advertises, and both setters."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jsonrpcserver.exceptions import JsonRpcError

from acp_agent.acp import modes
from acp_agent.acp.connection import _READ_AT
from acp_agent.acp.schema import (
    InitializeParams,
    NewSessionParams,
    PromptParams,
    SetSessionConfigOptionParams,
    SetSessionModeParams,
)
from acp_agent.acp.server import AcpServer
from acp_agent.kernel import Row, compose
from acp_agent.permissions.service import PERMISSIONS

pytestmark = pytest.mark.anyio


@dataclass
class Notes:
    """A connection that keeps what the server tells the client."""

    sent: list[dict[str, Any]] = field(default_factory=list)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        assert method == "session/update"
        self.sent.append(params["update"])


@asynccontextmanager
async def serving(tmp_path: Path, *, permissions: bool, **agents: Any) -> AsyncIterator[tuple[AcpServer, Notes]]:
    rows = [
        Row(id="sessions", name="acp_agent.session.plugin", config={"dir": str(tmp_path / "sessions")}),
        Row(id="llm", name="acp_agent.llm.service"),
        Row(id="tools", name="acp_agent.tools.plugin"),
        Row(
            id="agents",
            name="acp_agent.agent.plugin",
            config={
                "provider": "p",
                "model": "small",
                "models": [{"id": "large", "name": "Large", "description": "Slow"}],
                **agents,
            },
        ),
    ]
    if permissions:
        rows.append(Row(id="permissions", name="acp_agent.permissions.plugin"))
    ctx = compose(rows)
    notes = Notes()
    # The connection numbers each request it reads; these tests call the handlers themselves.
    _READ_AT.set(0)
    async with ctx.running():
        yield AcpServer(ctx, notes), notes  # type: ignore[arg-type]


def codes(error: pytest.ExceptionInfo[JsonRpcError]) -> tuple[int, str]:
    return error.value.code, error.value.message


MODEL_OPTION = {
    "id": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "small",
    "options": [{"value": "small", "name": "small"}, {"value": "large", "name": "Large", "description": "Slow"}],
}


async def test_a_session_offers_the_modes_and_a_mode_and_a_model_select(tmp_path: Path) -> None:
    async with serving(tmp_path, permissions=True) as (server, notes):
        created = (await server.new_session(NewSessionParams(cwd=str(tmp_path), mcp_servers=[]))).dump()
        session = created["sessionId"]
        assert created["modes"]["currentModeId"] == "ask"
        assert [m["id"] for m in created["modes"]["availableModes"]] == ["ask", "auto", "plan", "full"]
        [mode, model] = created["configOptions"]
        assert (mode["id"], mode["category"], mode["currentValue"]) == ("mode", "mode", "ask")
        assert [o["value"] for o in mode["options"]] == ["ask", "auto", "plan", "full"]
        assert model == MODEL_OPTION
        # The mode as a config option: both views change, both are told.
        answer = await modes.set_config_option(
            server.wire, SetSessionConfigOptionParams(session_id=session, config_id="mode", value="plan")
        )
        assert [o.current_value for o in answer.config_options] == ["plan", "small"]
        assert [u["sessionUpdate"] for u in notes.sent] == ["current_mode_update", "config_option_update"]
        assert notes.sent[0]["currentModeId"] == "plan"
        agent = server.wire.sessions[session].agent
        assert server.ctx.get(PERMISSIONS).mode(agent) == "plan"
        with pytest.raises(JsonRpcError) as unknown:
            await modes.set_config_option(
                server.wire, SetSessionConfigOptionParams(session_id=session, config_id="mode", value="yolo")
            )
        assert codes(unknown) == (
            -32602,
            "Invalid params: value: unknown session mode 'yolo'; the modes are 'ask', 'auto', 'plan', 'full'",
        )
        for call in (
            modes.set_mode(server.wire, SetSessionModeParams(session_id="nope", mode_id="plan")),
            modes.set_config_option(
                server.wire, SetSessionConfigOptionParams(session_id="nope", config_id="model", value="large")
            ),
        ):
            with pytest.raises(JsonRpcError) as missing:
                await call
            assert codes(missing) == (-32002, "Resource not found: session 'nope'")


async def test_without_a_permissions_row_there_are_no_modes_only_the_model(tmp_path: Path) -> None:
    async with serving(tmp_path, permissions=False) as (server, notes):
        created = (await server.new_session(NewSessionParams(cwd=str(tmp_path), mcp_servers=[]))).dump()
        session = created["sessionId"]
        assert "modes" not in created and created["configOptions"] == [MODEL_OPTION]
        with pytest.raises(JsonRpcError) as no_modes:
            await modes.set_mode(server.wire, SetSessionModeParams(session_id=session, mode_id="plan"))
        assert codes(no_modes) == (-32602, "Invalid params: modeId: this agent offers no session modes")
        with pytest.raises(JsonRpcError) as no_mode_option:
            await modes.set_config_option(
                server.wire, SetSessionConfigOptionParams(session_id=session, config_id="mode", value="plan")
            )
        assert codes(no_mode_option) == (
            -32602,
            "Invalid params: configId 'mode' is not a config option of this session ('model')",
        )
        answer = await modes.set_config_option(
            server.wire, SetSessionConfigOptionParams(session_id=session, config_id="model", value="large")
        )
        assert answer.dump()["configOptions"][0]["currentValue"] == "large"
        assert [u["sessionUpdate"] for u in notes.sent] == ["config_option_update"]
        assert server.wire.sessions[session].agent.options.model == "large"


LEVELLED = [{"id": "small", "thoughtLevels": ["low", "high"]}, {"id": "large", "vision": True}]
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


async def test_the_thought_level_select_follows_the_current_model(tmp_path: Path) -> None:
    async with serving(tmp_path, permissions=False, models=LEVELLED) as (server, notes):
        created = (await server.new_session(NewSessionParams(cwd=str(tmp_path), mcp_servers=[]))).dump()
        session = created["sessionId"]
        assert created["configOptions"][1] == {
            "id": "thought_level",
            "name": "Reasoning effort",
            "description": "How hard the model thinks before it answers",
            "category": "thought_level",
            "type": "select",
            "currentValue": "low",
            "options": [{"value": "low", "name": "low"}, {"value": "high", "name": "high"}],
        }
        answer = await modes.set_config_option(server.wire, level(session, "high"))
        assert [o.current_value for o in answer.config_options] == ["small", "high"]
        with pytest.raises(JsonRpcError) as unknown:
            await modes.set_config_option(server.wire, level(session, "max"))
        assert codes(unknown) == (
            -32602,
            "Invalid params: value: unknown thought level 'max' for the model 'small'; its levels are 'low', 'high'",
        )  # fmt: skip
        await modes.set_config_option(
            server.wire, SetSessionConfigOptionParams(session_id=session, config_id="model", value="large")
        )
        assert [o["id"] for o in notes.sent[-1]["configOptions"]] == ["model"]  # large has no levels
        with pytest.raises(JsonRpcError) as gone:
            await modes.set_config_option(server.wire, level(session, "high"))
        assert codes(gone) == (
            -32602,
            "Invalid params: configId 'thought_level' is not a config option of this session ('model')",
        )


def level(session: str, value: str) -> SetSessionConfigOptionParams:
    return SetSessionConfigOptionParams(session_id=session, config_id="thought_level", value=value)


async def test_images_need_a_vision_model_and_attachments_fit_the_cap(tmp_path: Path) -> None:
    async with serving(tmp_path, permissions=False, models=LEVELLED, maxAttachmentBytes=64) as (server, _):
        initialized = (await server.initialize(InitializeParams(protocol_version=1))).dump()
        assert initialized["agentCapabilities"]["promptCapabilities"] == {
            "image": True,
            "audio": False,
            "embeddedContext": True,
        }
        session = (await server.new_session(NewSessionParams(cwd=str(tmp_path), mcp_servers=[]))).session_id
        image = {"type": "image", "mimeType": "image/png", "data": PIXEL}
        blob = {"type": "resource", "resource": {"uri": "file:///p/a.bin", "blob": PIXEL}}
        for block, message in [
            (image, "Invalid params: model small does not take images"),
            (
                blob,
                (
                    "Invalid params: prompt[1]: the attachment is 70 bytes, "
                    "more than the 64 a prompt may attach (maxAttachmentBytes)"
                ),
            ),
        ]:
            with pytest.raises(JsonRpcError) as refused:
                await server.prompt(PromptParams(session_id=session, prompt=[{"type": "text", "text": "see"}, block]))
            assert codes(refused) == (-32602, message)
        await modes.set_config_option(
            server.wire, SetSessionConfigOptionParams(session_id=session, config_id="model", value="large")
        )
        with pytest.raises(JsonRpcError) as too_big:
            await server.prompt(PromptParams(session_id=session, prompt=[image]))
        assert "the attachment is 70 bytes" in codes(too_big)[1]
    async with serving(tmp_path, permissions=False) as (server, _):  # no model takes images
        initialized = (await server.initialize(InitializeParams(protocol_version=1))).dump()
        assert initialized["agentCapabilities"]["promptCapabilities"]["image"] is False
