"""web_fetch against HTTP servers this test starts on 127.0.0.1: pages as Markdown, text and JSON as
they are, redirects shown and bounded, limits, refusals; nothing beyond loopback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from acp_agent.tools.base import GrantScope
from acp_agent.tools.web import WebFetchParams, WebFetchTool, html_to_markdown

from .helpers import call_context

pytestmark = pytest.mark.anyio

PAGES = Path(__file__).parent / "pages"
PAGE = (
    "<html><head><title>T</title><script>var secret = 1;</script></head>"
    "<body><h1>Hello</h1><p>A <a href='/x'>link</a>.</p></body></html>"
)
SEEN: list[dict[str, str]] = []
RELEASE = threading.Event()
"""Set when the tests are done: the slow page answers then (its client has given up)."""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def send(self, status: int, kind: str | None, body: bytes, **headers: str) -> None:
        self.send_response(status)
        if kind:
            self.send_header("Content-Type", kind)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except BrokenPipeError:  # the slow page's client gave up
            pass

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        SEEN.append(dict(self.headers))
        path = self.path
        if path == "/page":
            self.send(200, "text/html; charset=utf-8", PAGE.encode(), **{"Set-Cookie": "session=abc"})
        elif path.startswith("/hop/"):
            left = int(path.rsplit("/", 1)[1])
            self.send(302, None, b"", Location=f"/hop/{left - 1}" if left else "/page", **{"Set-Cookie": "hop=1"})
        elif path == "/plain":
            self.send(200, "text/plain", "caf\u00e9 ok\n".encode())
        elif path == "/json":
            self.send(200, "application/json", json.dumps({"ok": True}).encode())
        elif path == "/huge":
            self.send(200, "text/plain", b"x" * 300_000)
        elif path == "/png":
            self.send(200, "image/png", b"\x89PNG\r\n\x1a\n")
        elif path == "/slow":
            RELEASE.wait(10)
            self.send(200, "text/plain", b"late")
        else:
            self.send(404, "text/plain", b"no such page")


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 answering with `handler`, in a thread: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serving(Handler) as url:
        yield url
        RELEASE.set()  # before the shutdown waits for the slow page's answer


async def fetch(url: str, **kw: object) -> str:
    max_chars = kw.pop("max_chars", None)
    tool = WebFetchTool(**kw)  # type: ignore[arg-type]
    return (await tool.run(WebFetchParams(url=url, max_chars=max_chars), call_context())).plain_text()  # type: ignore[arg-type]


async def test_a_page_comes_as_markdown_without_its_scripts(base: str) -> None:
    text = await fetch(f"{base}/page")
    assert text.startswith(f"[fetched {base}/page: text/html, {len(PAGE)} bytes]\n\n# Hello\n")
    assert "A [link](/x)." in text and "secret" not in text


async def test_redirects_are_followed_and_shown_without_carrying_cookies(base: str) -> None:
    SEEN.clear()
    text = await fetch(f"{base}/hop/1")
    assert text.splitlines()[:3] == [
        f"[302 redirect: {base}/hop/1 -> {base}/hop/0]",
        f"[302 redirect: {base}/hop/0 -> {base}/page]",
        f"[fetched {base}/page: text/html, {len(PAGE)} bytes]",
    ]
    assert all("Cookie" not in headers and "Authorization" not in headers for headers in SEEN)
    too_many = await fetch(f"{base}/hop/9")
    assert too_many.startswith("Error: more than 5 redirects; stopped after: [302 redirect:")


async def test_text_and_json_as_they_are_and_other_types_refused(base: str) -> None:
    assert (await fetch(f"{base}/plain")).endswith("\n\ncaf\u00e9 ok\n")
    assert (await fetch(f"{base}/json")).endswith('\n\n{"ok": true}')
    assert (
        await fetch(f"{base}/png")
        == f"Error: {base}/png is image/png, not text: it was not read (web_fetch reads HTML, text and JSON)"
    )


async def test_limits_on_bytes_read_and_characters_returned(base: str) -> None:
    text = await fetch(f"{base}/huge", max_bytes=100_000, max_chars=1000)
    lines = text.splitlines()
    assert lines[:2] == [
        f"[fetched {base}/huge: text/plain, 100000 bytes]",
        "[the body is longer than 100000 bytes: only its beginning was read]",
    ]
    assert lines[-1] == "[cut at 1000 of 100000 characters: ask again with a larger max_chars for more]"
    assert lines[-2] == "x" * 1000


async def test_errors_say_what_happened(base: str) -> None:
    assert await fetch(f"{base}/missing") == f"Error: {base}/missing answered 404 Not Found"
    assert await fetch(f"{base}/slow", timeout_seconds=0.3) == f"Error: fetching {base}/slow took longer than 0.3 s"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    refused = await fetch(f"http://127.0.0.1:{closed}/")
    assert refused.startswith(f"Error: fetching http://127.0.0.1:{closed}/ failed: ")
    assert await fetch("ftp://example.invalid/x") == "Error: ftp://example.invalid/x is not an http:// or https:// URL"
    assert (
        await fetch(f"{base}/page", denied_hosts=("127.0.0.1",)) == "Error: fetching from 127.0.0.1 is not allowed here"
    )


def test_the_grant_scope_is_the_host() -> None:
    tool = WebFetchTool()
    assert tool.grant_scope(WebFetchParams(url="http://LocalHost:8000/a")) == GrantScope(
        "localhost", "Always allow fetching from localhost"
    )
    assert tool.grant_scope(WebFetchParams(url="not a url")) is None
    assert tool.present(WebFetchParams(url="http://x/")).kind == "fetch"


@pytest.mark.parametrize("page", sorted(p.name for p in PAGES.glob("*.html")))
def test_real_pages_convert_with_their_text_and_without_their_scripts(page: str) -> None:
    markdown = html_to_markdown((PAGES / page).read_text(encoding="utf-8"))
    assert "localStorage" not in markdown and "<div" not in markdown
    assert markdown.count("\n#") >= 1  # headings survive as Markdown headings
