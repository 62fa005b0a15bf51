"""A project's `.mcp.json` in Claude Code's format, as server specs; an invalid file gives none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.mcp.project import FILE_LIMIT, described, project_servers
from acp_agent.mcp.servers import HttpServer, NameValue, StdioServer


def write(tmp_path: Path, document: Any) -> None:
    (tmp_path / ".mcp.json").write_text(
        document if isinstance(document, str) else json.dumps(document), encoding="utf-8"
    )


def test_stdio_and_http_servers(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mcpServers": {
                "db": {"command": "db-mcp", "args": ["--ro"], "env": {"DB": "x"}},
                "docs": {"type": "http", "url": "https://docs.example/mcp", "headers": {"X-Key": "k"}},
            }
        },
    )
    db, docs = project_servers(tmp_path)
    assert db == StdioServer(name="db", command="db-mcp", args=["--ro"], env=[NameValue(name="DB", value="x")])
    assert docs == HttpServer(
        type="http", name="docs", url="https://docs.example/mcp", headers=[NameValue(name="X-Key", value="k")]
    )
    assert (described(db), described(docs)) == ("db: db-mcp --ro", "docs: https://docs.example/mcp")
    assert project_servers(tmp_path / "absent") == []


@pytest.mark.parametrize(
    "document",
    [
        "{not json",
        [],
        {"mcpServers": []},
        {"mcpServers": {"a": 1}},
        {"mcpServers": {"a": {"command": "x", "env": []}}},
        {"mcpServers": {"a": {"type": "ws", "url": "ws://x"}}},
        " " * (FILE_LIMIT + 1),
    ],
)
def test_an_invalid_file_gives_no_server(tmp_path: Path, document: Any) -> None:
    write(tmp_path, document)
    assert project_servers(tmp_path) == []
