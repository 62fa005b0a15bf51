"""`UpdateMapper` for what the editor shows about the session itself and about terminals: a
`usage_update` after each model call, a `session_info_update` with the title at the first prompt,
and a `bash` call's terminal embedded while it runs (left out of a replay). Each update is held
against the official package's model and, when present, the protocol's schema."""

from __future__ import annotations

from typing import Any

from acp_agent.acp.updates import ChildOrigin, UpdateMapper
from acp_agent.session.content import (
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextBlock,
    TextContent,
    TextResourceContents,
    Usage,
)
from acp_agent.session.events import (
    AssistantMessageData,
    AssistantMessageEvent,
    SessionEvent,
    Source,
    ToolError,
    ToolResultData,
    ToolResultEvent,
    UserMessageData,
    UserMessageEvent,
)
from acp_agent.session.titles import TITLE_LENGTH, session_title
from acp_agent.tools import BashTool, Diff, Tool, ToolDisplayData, ToolDisplayEvent

from .test_updates_files import call, wire

TOOLS: dict[str, Tool[Any]] = {"bash": BashTool()}
CHILD = ChildOrigin(route="s1/call_spawn", parent_tool_call_id="call_spawn")


def mapper(origin: ChildOrigin | None = None, **options: Any) -> UpdateMapper:
    return UpdateMapper(TOOLS.get, origin, **options)


def message(usage: Usage | None) -> SessionEvent:
    data = AssistantMessageData(turn=1, step=1, content=[TextBlock(text="hi")], usage=usage)
    return AssistantMessageEvent(seq=0, time=0, data=data)


def said(*content: Any, source: str = "user") -> SessionEvent:
    return UserMessageEvent(seq=0, time=0, data=UserMessageData(content=list(content), source=Source(kind=source)))


def display(call_id: str, terminal_id: str | None = None, diffs: list[Diff] | None = None) -> SessionEvent:
    data = ToolDisplayData(call_id=call_id, terminal_id=terminal_id, diffs=diffs)
    return ToolDisplayEvent(seq=0, time=0, data=data)


def result(call_id: str, text: str, *, is_error: bool = False, code: str | None = None) -> SessionEvent:
    error = ToolError(code=code, message=text) if code else None
    data = ToolResultData(
        turn=1, step=1, call_id=call_id, content=[TextContent(text=text)], is_error=is_error, error=error
    )
    return ToolResultEvent(seq=0, time=0, data=data)


# -- usage ---------------------------------------------------------------------------------------


def test_each_model_call_reports_the_context_it_leaves_against_the_window() -> None:
    m = mapper(context_window=128000)
    usage = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=3000, reasoning_tokens=150)
    assert wire(m.map(message(usage))) == {"sessionUpdate": "usage_update", "used": 4200, "size": 128000}
    assert wire(m.map(message(Usage(input_tokens=7, output_tokens=3)))) == {
        "sessionUpdate": "usage_update", "used": 10, "size": 128000
    }  # fmt: skip
    assert m.map(message(None)) is None  # a call that reported nothing (cut off before its usage)


def test_no_usage_without_a_context_window_nor_for_a_child() -> None:
    usage = Usage(input_tokens=1, output_tokens=1)
    assert mapper().map(message(usage)) is None
    assert mapper(CHILD, context_window=1000).map(message(usage)) is None


# -- title ---------------------------------------------------------------------------------------


def test_the_first_prompt_titles_the_session_once() -> None:
    m = mapper()
    assert wire(m.map(said(TextContent(text="  Fix the\n  failing   test ")))) == {
        "sessionUpdate": "session_info_update", "title": "Fix the failing test"
    }  # fmt: skip
    assert m.map(said(TextContent(text="And another thing"))) is None
    assert m.map(said(TextContent(text="a steer"), source="steer")) is None


def test_a_plugins_message_is_not_the_users_and_a_prompt_without_words_names_nothing() -> None:
    m = mapper()
    assert m.map(said(TextContent(text="a reminder"), source="plugin")) is None
    assert m.map(said(TextContent(text="   "))) is None  # the first prompt, with nothing to show
    assert m.map(said(TextContent(text="later"))) is None  # only the first prompt names the session


def test_a_link_only_prompt_is_titled_by_the_links_names_and_a_long_one_is_cut() -> None:
    link = ResourceLink(uri="file:///w/notes.md", name="notes.md")
    assert wire(mapper().map(said(link)))["title"] == "notes.md"
    attached = EmbeddedResource(resource=TextResourceContents(uri="file:///w/src/main.py", text="pass"))
    assert session_title([attached, link]) == "main.py notes.md"
    shot = ImageContent(data="AAAA", mime_type="image/png", uri="file:///w/shot.png")
    assert (
        session_title([shot]) == "shot.png"
        and session_title([ImageContent(data="AAAA", mime_type="image/png")]) is None
    )
    long = "word " * 40
    title = session_title([TextContent(text=long)])
    assert title is not None and len(title) == TITLE_LENGTH and title.endswith("…")


def test_a_session_whose_prompts_were_shown_already_is_not_titled_again_and_a_child_never() -> None:
    shown = [said(TextContent(text="earlier"))]
    assert mapper(shown=shown).map(said(TextContent(text="now"))) is None
    assert (
        wire(mapper(shown=[said(TextContent(text="x"), source="plugin")]).map(said(TextContent(text="now"))))["title"]
        == "now"
    )
    assert mapper(CHILD).map(said(TextContent(text="child prompt"))) is None


# -- terminals -----------------------------------------------------------------------------------


def test_a_terminal_is_embedded_while_the_call_runs_and_replaces_the_output_after() -> None:
    m = mapper()
    m.map(call("c1", "bash", {"command": "make"}))
    assert wire(m.map(display("c1", terminal_id="term-1"))) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "content": [{"type": "terminal", "terminalId": "term-1"}],
    }
    assert wire(m.map(result("c1", "lots of output\n[exit code 2]", is_error=True)))["content"] == [
        {"type": "terminal", "terminalId": "term-1"}
    ]


def test_a_timed_out_or_failed_terminal_call_keeps_its_message_before_the_terminal() -> None:
    m = mapper(CHILD)
    m.map(call("c1", "bash", {"command": "sleep 99"}))
    shown = wire(m.map(display("c1", terminal_id="term-1")))
    assert shown["toolCallId"] == "s1/call_spawn/c1" and "_meta" in shown
    assert wire(m.map(result("c1", "Command timed out after 1 s", is_error=True, code="timeout")))["content"] == [
        {"type": "content", "content": {"type": "text", "text": "Command timed out after 1 s"}},
        {"type": "terminal", "terminalId": "term-1"},
    ]


def test_diffs_and_a_terminal_shown_by_one_call_stay_together() -> None:
    m = mapper()
    m.map(call("c1", "bash", {"command": "fmt"}))
    diff = Diff(path="/w/a.py", old_text="a", new_text="b")
    m.map(display("c1", diffs=[diff]))
    assert [item["type"] for item in wire(m.map(display("c1", terminal_id="t")))["content"]] == ["diff", "terminal"]
    assert [item["type"] for item in wire(m.map(result("c1", "ok")))["content"]] == ["diff", "terminal"]


def test_a_replay_leaves_the_terminal_out_and_shows_the_output() -> None:
    m = mapper(live=False)
    m.map(call("c1", "bash", {"command": "make"}))
    assert m.map(display("c1", terminal_id="term-1")) is None  # nothing else to show
    assert wire(m.map(result("c1", "built\n")))["content"] == [
        {"type": "content", "content": {"type": "text", "text": "```console\nbuilt\n```"}}
    ]
