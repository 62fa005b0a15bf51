"""Loader plugin providing `ctx.connection`: how the ACP connection on stdio reads its client.

Row: `{id: connection, name: acp_agent.acp.plugin, config: {maxFrameBytes: 67108864,
childAnswerEveryMs: 200}}`, provided as `ctx.find(CONNECTION)`. Without the row the defaults apply.
"""

from __future__ import annotations

from typing import Final

from pydantic import PositiveInt

from acp_agent.acp.frames import MAX_FRAME_BYTES
from acp_agent.kernel.context import Context, ServiceKey
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer

name = "connection"
inject: tuple[str, ...] = ()


class ConnectionConfig(PluginConfig):
    max_frame_bytes: PositiveInt = MAX_FRAME_BYTES
    """The longest frame (one line of JSON) read from the client; a longer one is skipped as it
    arrives, never held whole, and answered -32600 with id null."""
    child_answer_every_ms: PositiveInt | None = 200
    """For a client without child sessions: a child's answer, on the card of the call that started
    it, is replaced at each text block's end and, while a block streams, at most this often (ms of
    the child's clock). None: at block ends only (the replayed scenarios, whose chunk times are
    the replaying machine's)."""
    system_prompt_override: bool = False
    """Whether a client may replace the agent's own instructions with its system prompt
    (`systemPrompt.mode: override`, advertised then); appending one is always allowed."""


Config = ConnectionConfig
CONNECTION: Final = ServiceKey[ConnectionConfig]("connection")
"""`ctx.find(CONNECTION)`: the connection's options (a composition may leave the row out)."""


def apply(ctx: Context, config: ConnectionConfig) -> Disposer:
    return ctx.provide(CONNECTION, config)
