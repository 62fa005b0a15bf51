from __future__ import annotations

import pytest

from acp_agent.mcp.environment import server_environment
from acp_agent.mcp.servers import HttpServer, NameValue, StdioServer, UnsupportedServer, parse_servers


def test_the_three_transports_parse_and_unknown_fields_are_ignored() -> None:
    stdio, http, sse = parse_servers(
        [
            {
                "name": "files",
                "command": "/bin/files",
                "args": ["-v"],
                "env": [{"name": "A", "value": "1"}],
                "_meta": {},
            },
            {"type": "http", "name": "docs", "url": "https://d/mcp", "headers": [{"name": "H", "value": "v"}]},
            {"type": "sse", "name": "old", "url": "https://o/sse", "headers": []},
        ]
    )
    assert stdio == StdioServer(name="files", command="/bin/files", args=["-v"], env=[NameValue(name="A", value="1")])
    assert isinstance(http, HttpServer) and (http.type, http.url) == ("http", "https://d/mcp")
    assert isinstance(sse, HttpServer) and sse.type == "sse"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"type": "acp", "name": "x", "serverId": "1"},
            "mcpServers[0]: transport 'acp' is not supported (stdio, http, sse)",
        ),
        ("files", "mcpServers[0]: transport None is not supported (stdio, http, sse)"),
        ({"name": "x"}, "mcpServers[0]: command: Field required"),
        ({"type": "http", "name": "x", "url": 3, "headers": []}, "mcpServers[0]: url: Input should be a valid string"),
    ],
)
def test_an_entry_this_agent_cannot_connect_names_the_field(entry: object, message: str) -> None:
    with pytest.raises(UnsupportedServer) as raised:
        parse_servers([entry])  # type: ignore[list-item]  # what a client may send
    assert str(raised.value) == message


def test_a_stdio_server_environment_never_holds_a_credential_variable() -> None:
    defaults = {"PATH": "/bin", "HOME": "/h"}
    entries = [
        NameValue(name="TOKEN", value="t"),
        NameValue(name="DEEPSEEK_API_KEY", value="k"),
        NameValue(name="HOME", value="/x"),
    ]
    assert server_environment(defaults, entries, frozenset({"DEEPSEEK_API_KEY"})) == {
        "PATH": "/bin",
        "HOME": "/x",
        "TOKEN": "t",
    }
