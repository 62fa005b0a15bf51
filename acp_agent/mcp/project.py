"""A project's own MCP servers: `<project>/.mcp.json`, in Claude Code's format.

`{"mcpServers": {"<name>": {"command", "args"?, "env"?: {NAME: value}} or {"type": "http" | "sse",
"url", "headers"?: {NAME: value}}}}`. They connect beside the editor's servers once the project is
trusted (`acp_agent.trust`); a name the editor's servers use stays the editor's. A file that is
not valid is left out whole, with a warning naming it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Final

from acp_agent.mcp.servers import ServerSpec, UnsupportedServer, parse_servers
from acp_agent.tools.confined import project_file_head
from acp_agent.tools.errors import OutsideWorkspace

log = logging.getLogger(__name__)

FILE_NAME: Final = ".mcp.json"
FILE_LIMIT: Final = 256 * 1024


def project_servers(cwd: Path) -> list[ServerSpec]:
    """The servers of `cwd`'s `.mcp.json` (none when it is absent or invalid)."""
    path = cwd / FILE_NAME
    try:
        data, size = project_file_head(cwd, path, FILE_LIMIT + 1)
        if size > FILE_LIMIT:
            raise ValueError(f"larger than {FILE_LIMIT} bytes")
        return parse_servers(_entries(json.loads(data)))
    except FileNotFoundError:
        return []
    except (OSError, OutsideWorkspace, ValueError) as exc:  # UnsupportedServer is a ValueError
        log.warning("the MCP servers of %s are not used: %s", path, exc)
        return []


def _entries(document: Any) -> list[dict[str, Any]]:
    """Claude Code's `mcpServers` object as ACP's list of entries."""
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise UnsupportedServer("`mcpServers` is not an object")
    entries = []
    for name, server in servers.items():
        if not isinstance(server, dict):
            raise UnsupportedServer(f"`mcpServers.{name}` is not an object")
        entry = {key: value for key, value in server.items() if key not in ("env", "headers")}
        entry["name"] = name
        for key in ("env", "headers"):
            values = server.get(key, {})
            if not isinstance(values, dict):
                raise UnsupportedServer(f"`mcpServers.{name}.{key}` is not an object")
            entry[key] = [{"name": k, "value": v} for k, v in values.items()]
        if entry.get("type", "stdio") == "stdio":
            entry.pop("headers")
        else:
            entry.pop("env")
        entries.append(entry)
    return entries


def described(spec: ServerSpec) -> str:
    """One line saying what a server would run or reach (for the trust question)."""
    if spec.type == "stdio":
        return f"{spec.name}: {' '.join([spec.command, *spec.args])}"
    return f"{spec.name}: {spec.url}"
