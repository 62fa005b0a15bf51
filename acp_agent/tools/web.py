"""The `web_fetch` tool, and the plugin that registers it.

An `http`/`https` GET with httpx: redirects followed by hand (at most `MAX_REDIRECTS`, each shown,
each host checked against `denied_hosts`), a timeout, at most `max_bytes` of the body read. HTML
becomes Markdown (html2text: the package README says why), plain text and JSON stay as they are,
any other type is refused with its type named; the model reads at most `max_chars` characters.
Nothing of the user's or the agent's travels: no cookies (none kept between hops either), no
authorization header, no `.netrc` or proxy credentials from the environment (`trust_env=False`).
httpx and html2text are imported at the first fetch, not at start-up.

Its calls need approval: the `ask` mode asks (with "Always allow fetching from <host>", which the
permissions package saves for the project); `auto` and `plan` run it without asking (it only
reads: `Tool.only_reads`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from pydantic import Field

from acp_agent.kernel.context import Context
from acp_agent.kernel.plugin import PluginConfig
from acp_agent.kernel.scope import Disposer
from acp_agent.tools import texts
from acp_agent.tools.base import GrantScope, Tool, ToolCallContext, ToolParams, ToolPresentation, ToolResult
from acp_agent.tools.registry import TOOLS

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS: Final = 5
_TEXT_TYPES: Final = ("text/", "application/json", "application/xml", "application/javascript")
_HTML_TYPES: Final = ("text/html", "application/xhtml+xml")


class WebFetchParams(ToolParams):
    """Arguments of web_fetch."""

    url: str = Field(description="The http:// or https:// URL to GET.")
    max_chars: int | None = Field(default=None, ge=1, description="The most characters to return (default 50000).")


class WebFetchTool(Tool[WebFetchParams]):
    """Fetches a URL and returns it as text (HTML as Markdown)."""

    name = "web_fetch"
    Params = WebFetchParams
    needs_approval = True
    only_reads = True
    concurrency_safe = True

    def __init__(
        self,
        *,
        timeout_seconds: float = 30,
        max_bytes: int = 5 * 1024 * 1024,
        max_chars: int = 50000,
        denied_hosts: tuple[str, ...] = (),
    ) -> None:
        self.timeout_seconds = timeout_seconds
        self.max_bytes = max_bytes
        self.max_chars = max_chars
        self.denied_hosts = frozenset(host.lower() for host in denied_hosts)
        self.description = texts.web_fetch_description(max_chars)

    def grant_scope(self, params: WebFetchParams) -> GrantScope | None:
        host = _host(params.url)
        return GrantScope(key=host, label=texts.always_fetch_from(host)) if host else None

    async def run(self, params: WebFetchParams, call: ToolCallContext) -> ToolResult:
        import httpx

        refused = self._refused(params.url)
        if refused is not None:
            return refused
        url = params.url
        hops: list[str] = []
        timeout = httpx.Timeout(self.timeout_seconds)
        headers = {
            "User-Agent": "acp-agent (web_fetch)",
            "Accept": "text/html, text/plain, application/json;q=0.9, */*;q=0.5",
        }
        try:
            async with httpx.AsyncClient(
                timeout=timeout, trust_env=False, follow_redirects=False, headers=headers
            ) as client:
                while True:
                    client.cookies.clear()  # a cookie one hop sets never travels to the next
                    async with client.stream("GET", url) as response:
                        if response.is_redirect and response.next_request is not None:
                            following = str(response.next_request.url)
                            if len(hops) == MAX_REDIRECTS:
                                return ToolResult.failure(
                                    texts.too_many_redirects(MAX_REDIRECTS, hops), "too_many_redirects"
                                )
                            refused = self._refused(following)
                            if refused is not None:
                                return refused
                            hops.append(texts.redirected(response.status_code, url, following))
                            url = following
                            continue
                        return await self._answer(response, url, hops, params)
        except httpx.TimeoutException:
            return ToolResult.failure(texts.fetch_timed_out(url, self.timeout_seconds), "timeout")
        except httpx.HTTPError as exc:
            return ToolResult.failure(texts.fetch_failed(url, str(exc) or type(exc).__name__), "fetch_failed")

    async def _answer(self, response: httpx.Response, url: str, hops: list[str], params: WebFetchParams) -> ToolResult:
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if response.status_code >= 400:
            return ToolResult.failure(texts.http_error(url, response.status_code, response.reason_phrase), "http_error")
        if kind and not kind.startswith(_TEXT_TYPES) and not kind.endswith(("+json", "+xml")):
            return ToolResult.failure(texts.not_fetched_type(url, kind), "unsupported_type")
        body = bytearray()
        cut = False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_bytes:
                del body[self.max_bytes :]
                cut = True
                break
        text = bytes(body).decode(response.charset_encoding or "utf-8", "replace")
        if kind in _HTML_TYPES:
            text = html_to_markdown(text)
        limit = params.max_chars or self.max_chars
        notes = [*hops, texts.fetched(url, kind or "no type", len(body))]
        if cut:
            notes.append(texts.body_cut(self.max_bytes))
        if len(text) > limit:
            text = text[:limit] + "\n" + texts.chars_cut(limit, len(text))
        result = ToolResult.text("\n".join(notes) + "\n\n" + text)
        return result.model_copy(
            update={"raw_output": {"url": url, "status": response.status_code, "contentType": kind}}
        )

    def _refused(self, url: str) -> ToolResult | None:
        host = _host(url)
        if host is None or urlsplit(url).scheme not in ("http", "https"):
            return ToolResult.failure(texts.not_http(url), "invalid_url")
        if host in self.denied_hosts:
            return ToolResult.failure(texts.host_denied(host), "denied_host")
        return None

    def present(self, params: WebFetchParams) -> ToolPresentation:
        return ToolPresentation(title=f"Fetch {params.url}", kind="fetch")


def html_to_markdown(html: str) -> str:
    """An HTML page as Markdown (html2text: scripts and styles dropped, links kept inline, no
    wrapping)."""
    import html2text

    converter = html2text.HTML2Text()
    converter.body_width = 0
    converter.ignore_images = True
    return converter.handle(html).strip() + "\n"


def _host(url: str) -> str | None:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.lower() if host else None


# The plugin: module attributes, as the loader expects.
name = "web"
inject = ("tools",)


class Config(PluginConfig):
    """Configuration of the `web` plugin row."""

    timeout_seconds: float = Field(default=30, gt=0)
    max_bytes: int = Field(default=5 * 1024 * 1024, gt=0)
    """The most of a body read."""
    max_chars: int = Field(default=50000, gt=0)
    """What the model reads of a page unless the call asks for less or more."""
    denied_hosts: list[str] = Field(default_factory=list)
    """Hosts never fetched (a redirect to one is refused too)."""


def apply(ctx: Context, config: Config) -> Disposer:
    """Register web_fetch for every agent."""
    tool = WebFetchTool(
        timeout_seconds=config.timeout_seconds,
        max_bytes=config.max_bytes,
        max_chars=config.max_chars,
        denied_hosts=tuple(config.denied_hosts),
    )
    return ctx.get(TOOLS).register(tool)
