"""The environment of a stdio MCP server: the SDK's defaults plus the client's `env` entries,
never a variable holding one of the agent's own credentials (`environ.credential_names`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from acp_agent.mcp.servers import NameValue


def server_environment(
    defaults: Mapping[str, str], entries: Iterable[NameValue], hidden: frozenset[str]
) -> dict[str, str]:
    env = {**defaults, **{entry.name: entry.value for entry in entries}}
    return {name: value for name, value in env.items() if name not in hidden}
