"""`history_updates`: a stored session and its children's logs as the updates `session/load`
replays, each held against the official package's model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from acp import schema as official

from acp_agent.acp.history import StoredLog, history_updates
from acp_agent.acp.schema import SessionNotification
from acp_agent.session import (
    AssistantChunkData,
    AssistantMessageData,
    CompactionData,
    Finish,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    ResourceLink,
    Session,
    SessionHeader,
    SessionStore,
    Source,
    StepData,
    TextBlock,
    TextContent,
    TextDelta,
    ToolCallData,
    ToolResultData,
    Trigger,
    TurnCompleted,
    TurnEndData,
    TurnStartData,
    UserMessageData,
    default_registry,
)
from acp_agent.session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    CompactionEvent,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)
from acp_agent.tools.bash import BashTool

TOOLS = {"bash": BashTool()}


class Log:
    """Writes a valid log one turn at a time (steps are opened and closed as needed)."""

    def __init__(self, session_id: str, *, route: str | None = None, spawn_call_id: str | None = None,
                 parent: str | None = None, created_at: int = 1, seed: Log | None = None) -> None:  # fmt: skip
        seed_events = list(seed.session.events) if seed is not None else []
        header = SessionHeader(
            id=session_id, created_at=created_at, cwd="/work", route=route, parent_session=parent,
            spawn_call_id=spawn_call_id, seed_length=len(seed_events) or None,
        )  # fmt: skip
        self.session = Session(header, registry=default_registry(), seed=seed_events)
        self.turn = 0
        self.step = 0

    def user(self, *content: Any, source: str = "user") -> Log:
        if source in ("user", "plugin") and self.step == 0:
            self.turn = self.session.next_turn
            self.session.append(TurnStartEvent, TurnStartData(turn=self.turn, trigger=Trigger(kind="message")))
        self.session.append(UserMessageEvent, UserMessageData(content=list(content), source=Source(kind=source)))
        return self

    def model(self, *, thought: str = "", text: str = "", calls: tuple[tuple[str, str], ...] = ()) -> Log:
        """A step: the streamed deltas, the message, the calls (each answered `ok <id>`)."""
        self._close_step()
        self.step += 1
        turn, step = self.turn, self.step
        self.session.append(StepStartEvent, StepData(turn=turn, step=step))
        chunks: list[Any] = [ReasoningDelta(index=0, text=thought)] if thought else []
        chunks += [TextDelta(index=1, text=word) for word in re.findall(r"\S+\s*", text)]
        chunks.append(Finish(reason=FinishReason(kind="tool-calls" if calls else "stop")))
        for chunk in chunks:
            self.session.append(AssistantChunkEvent, AssistantChunkData(turn=turn, step=step, chunk=chunk))
        blocks: list[Any] = [ReasoningBlock(text=thought)] if thought else []
        blocks += [TextBlock(text=text)] if text else []
        message = AssistantMessageData(turn=turn, step=step, content=blocks)
        self.session.append(AssistantMessageEvent, message)
        for call_id, name in calls:
            data = ToolCallData(turn=turn, step=step, call_id=call_id, name=name, arguments='{"command": "ls"}')
            self.session.append(ToolCallEvent, data)
        for call_id, _ in calls:
            content = [TextContent(text=f"ok {call_id}")]
            result = ToolResultData(turn=turn, step=step, call_id=call_id, content=content, is_error=False)
            self.session.append(ToolResultEvent, result)
        return self

    def end(self) -> Log:
        self._close_step()
        self.session.append(TurnEndEvent, TurnEndData(turn=self.turn, reason=TurnCompleted()))
        self.step = 0
        return self

    def _close_step(self) -> None:
        if self.step:
            self.session.append(StepEndEvent, StepData(turn=self.turn, step=self.step))

    def stored(self, *children: StoredLog) -> StoredLog:
        return StoredLog(self.session.header, self.session.events, list(children))


def replay(log: StoredLog) -> list[dict[str, Any]]:
    """The updates as they go out, each checked against the official model on the way."""
    updates = []
    for session_id, update in history_updates(log, TOOLS.get, TOOLS.get):
        assert session_id == log.header.id  # without child sessions, all on the top-level session
        params = SessionNotification(session_id=session_id, update=update).dump()
        official.SessionNotification.model_validate(params)
        updates.append(params["update"])
    return updates


def shown(updates: list[dict[str, Any]]) -> list[str]:
    """A short line per update: its kind and its text or tool call id."""
    lines = []
    for update in updates:
        kind = update["sessionUpdate"]
        if "toolCallId" in update:
            lines.append(f"{kind} {update['toolCallId']} {update.get('status', '')}".strip())
        elif kind == "session_info_update":
            lines.append(f"{kind} {update['title']}")
        elif kind == "usage_update":
            lines.append(f"{kind} {update['used']}/{update['size']}")
        else:
            content = update["content"]
            lines.append(f"{kind} {content.get('text', content.get('uri'))}")
    return lines


def test_the_users_words_then_one_chunk_per_block_and_each_call_with_its_final_status() -> None:
    link = ResourceLink.model_validate(
        {"type": "resource_link", "uri": "file:///a.md", "name": "a.md", "title": "A", "mimeType": "text/markdown",
         "size": 12, "description": 5, "annotations": {"x": 1}, "extra": True}
    )  # fmt: skip
    log = (
        Log("p", route="s1")
        .user(TextContent(text="Look."), link)
        .model(thought="Hmm.", text="On it.", calls=(("call_ls", "bash"), ("call_x", "gone")))
        .user(TextContent(text="Also b."), source="steer")
        .user(TextContent(text="(a reminder)"), source="plugin")
        .model(text="Done.")
        .end()
    )
    updates = replay(log.stored())
    assert shown(updates) == [
        "user_message_chunk Look.",
        "user_message_chunk file:///a.md",
        "session_info_update Look.",
        "agent_thought_chunk Hmm.",
        "agent_message_chunk On it.",
        "tool_call call_ls in_progress",
        "tool_call call_x in_progress",
        "tool_call_update call_ls completed",
        "tool_call_update call_x completed",
        "user_message_chunk Also b.",
        "agent_message_chunk Done.",
    ]
    # The link keeps the fields ACP knows, when they have the right type.
    assert updates[1]["content"] == {
        "type": "resource_link", "uri": "file:///a.md", "name": "a.md", "title": "A",
        "mimeType": "text/markdown", "size": 12,
    }  # fmt: skip
    assert updates[5]["title"] == "ls" and updates[5]["kind"] == "execute"  # the tool's own presentation
    assert updates[6]["title"] == "gone"  # a tool that no longer exists: its name


def test_a_childs_tool_calls_come_right_before_the_update_completing_the_call_that_started_it() -> None:
    parent = Log("p", route="s1").user(TextContent(text="Go."))
    parent.model(calls=(("call_a", "subagent"), ("call_b", "subagent"))).end()
    grandchild = Log("g", route="s1/call_a/call_g", spawn_call_id="call_g", parent="a").user(TextContent(text="g"))
    grandchild.model(calls=(("call_gg", "bash"),)).end()
    child_a = Log("a", route="s1/call_a", spawn_call_id="call_a", parent="p").user(TextContent(text="a"))
    child_a.model(text="Child text stays in its log.", calls=(("call_g", "subagent"), ("call_x", "bash"))).end()
    child_b = Log("b", route="s1/call_b", spawn_call_id="call_b", parent="p", created_at=0).user(TextContent(text="b"))
    child_b.model(calls=(("call_y", "bash"),)).end()
    updates = replay(parent.stored(child_b.stored(), child_a.stored(grandchild.stored())))
    assert shown(updates) == [
        "user_message_chunk Go.",
        "session_info_update Go.",
        "tool_call call_a in_progress",
        "tool_call call_b in_progress",
        "tool_call s1/call_a/call_g in_progress",
        "tool_call s1/call_a/call_x in_progress",
        "tool_call s1/call_a/call_g/call_gg in_progress",
        "tool_call_update s1/call_a/call_g/call_gg completed",
        "tool_call_update s1/call_a/call_g completed",
        "tool_call_update s1/call_a/call_x completed",
        "tool_call_update call_a completed",
        "tool_call s1/call_b/call_y in_progress",
        "tool_call_update s1/call_b/call_y completed",
        "tool_call_update call_b completed",
    ]
    meta = {u["toolCallId"]: u.get("_meta", {}).get("acpAgent") for u in updates if "toolCallId" in u}
    assert meta["s1/call_a/call_x"] == {"route": "s1/call_a", "parentToolCallId": "call_a"}
    assert meta["s1/call_a/call_g/call_gg"] == {"route": "s1/call_a/call_g", "parentToolCallId": "s1/call_a/call_g"}
    assert meta["call_a"] is None


def test_a_reused_call_id_takes_the_child_of_that_occurrence() -> None:
    parent = Log("p", route="s1").user(TextContent(text="1")).model(calls=(("call_0", "subagent"),)).end()
    parent.user(TextContent(text="2")).model(calls=(("call_0", "subagent"),)).end()
    first = Log("c1", route="s1/call_0", spawn_call_id="call_0", parent="p").user(TextContent(text="x"))
    first.model(calls=(("call_one", "bash"),)).end()
    second = Log("c2", route="s1/call_0#2", spawn_call_id="call_0", parent="p", created_at=0)
    second.user(TextContent(text="y"))
    second.model(calls=(("call_two", "bash"),)).end()
    updates = shown(replay(parent.stored(second.stored(), first.stored())))
    assert updates.index("tool_call s1/call_0/call_one in_progress") < updates.index("user_message_chunk 2")
    assert updates.index("tool_call s1/call_0#2/call_two in_progress") > updates.index("user_message_chunk 2")


def test_without_a_matching_route_the_spawn_call_id_decides_and_an_unspawned_child_goes_last() -> None:
    parent = Log("p", route="s2").user(TextContent(text="Go.")).model(calls=(("call_a", "subagent"),)).end()
    moved = Log("a", route="s1/call_a", spawn_call_id="call_a", parent="p").user(TextContent(text="a"))
    moved.model(calls=(("call_x", "bash"),)).end()  # recorded when the parent was s1
    loose = Log("l", parent="p").user(TextContent(text="l")).model(calls=(("call_l", "bash"),)).end()
    updates = shown(replay(parent.stored(loose.stored(), moved.stored())))
    assert updates == [
        "user_message_chunk Go.",
        "session_info_update Go.",
        "tool_call call_a in_progress",
        "tool_call s1/call_a/call_x in_progress",
        "tool_call_update s1/call_a/call_x completed",
        "tool_call_update call_a completed",
        "tool_call l/call_l in_progress",  # no route: the child's id stands in
        "tool_call_update l/call_l completed",
    ]
    unrouted = Log("q").user(TextContent(text="Go.")).model(calls=(("call_a", "subagent"),)).end()
    assert shown(replay(unrouted.stored(moved.stored())))[3] == "tool_call s1/call_a/call_x in_progress"


def test_a_fork_shows_only_its_own_events_and_counts_its_seeds_calls_for_its_childrens_routes() -> None:
    parent = Log("p", route="s1").user(TextContent(text="Before.")).model(calls=(("call_0", "bash"),)).end()
    parent.user(TextContent(text="Fork.")).model(calls=(("call_f", "subagent_fork"),)).end()
    seed = Log("seed", route="s1").user(TextContent(text="Before.")).model(calls=(("call_0", "bash"),)).end()
    fork = Log("f", route="s1/call_f", spawn_call_id="call_f", parent="p", seed=seed).user(TextContent(text="Go on."))
    fork.model(calls=(("call_0", "subagent"),)).end()
    grandchild = Log("g", route="s1/call_f/call_0#2", spawn_call_id="call_0", parent="f").user(TextContent(text="g"))
    grandchild.model(calls=(("call_deep", "bash"),)).end()
    assert shown(replay(parent.stored(fork.stored(grandchild.stored())))) == [
        "user_message_chunk Before.",
        "session_info_update Before.",
        "tool_call call_0 in_progress",  # the seed's call is the parent's: shown once, as the parent's
        "tool_call_update call_0 completed",
        "user_message_chunk Fork.",
        "tool_call call_f in_progress",
        "tool_call s1/call_f/call_0 in_progress",
        "tool_call s1/call_f/call_0#2/call_deep in_progress",
        "tool_call_update s1/call_f/call_0#2/call_deep completed",
        "tool_call_update s1/call_f/call_0 completed",
        "tool_call_update call_f completed",
    ]


def test_as_child_sessions_each_child_is_announced_told_shown_under_its_id_and_ended_without_its_seed() -> None:
    parent = Log("p", route="s1").user(TextContent(text="Before.")).model(text="Sure.").end()
    parent.user(TextContent(text="Fork.")).model(calls=(("call_f", "subagent_fork"),)).end()
    seed = Log("seed", route="s1").user(TextContent(text="Before.")).model(text="Sure.").end()
    fork = Log("f", route="s1/call_f", spawn_call_id="call_f", parent="p", seed=seed).user(TextContent(text="Go on."))
    fork.model(thought="Hm.", text="Done", calls=(("call_ls", "bash"),)).end()
    frames = history_updates(parent.stored(fork.stored()), TOOLS.get, TOOLS.get, child_sessions=True)
    lines = []
    for session_id, update in frames:
        dumped = SessionNotification(session_id=session_id, update=update).dump()["update"]
        kind = dumped["sessionUpdate"]
        detail = dumped.get("messageId") or dumped.get("toolCallId") or (dumped.get("state") or {}).get("state", "")
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            detail = dumped["content"]["text"]
        lines.append(f"{session_id} {kind} {detail}")
    assert lines[4:] == [
        "p tool_call call_f",
        "p subagent_update running",  # announced on the parent's session, before anything of it
        "p tool_call_update call_f",  # the card links to the child session
        "p session_message task:f",
        "f session_message task",  # the seed's "Before." and "Sure." are the parent's, not shown again
        "f agent_thought_chunk Hm.",
        "f agent_message_chunk Done",
        "f tool_call call_ls",
        "f tool_call_update call_ls",
        "f session_message answer",  # the call's result (`ok call_f`) goes back as the answer
        "f session_message_chunk answer",
        "p session_message answer:f",
        "p subagent_update idle",
        "p tool_call_update call_f",
    ]


def test_a_loaded_log_shows_each_message_block_whole_and_the_deltas_of_a_step_cut_short_run_by_run(
    tmp_path: Path,
) -> None:
    """A load keeps no chunk of a step that logged its message: the message's blocks show
    instead, one chunk each. A step a crash cut short keeps its chunks: one chunk per run."""
    log = Log("p", route="s1").user(TextContent(text="Look.")).model(thought="Hmm, ", text="On it.").end()
    log.user(TextContent(text="More."))
    session, turn = log.session, log.turn
    session.append(StepStartEvent, StepData(turn=turn, step=1))
    for chunk in [
        ReasoningDelta(index=0, text="So "),
        ReasoningDelta(index=0, text="then"),
        TextDelta(index=1, text="Cut "),
    ]:
        session.append(AssistantChunkEvent, AssistantChunkData(turn=turn, step=1, chunk=chunk))
    session.append(AssistantChunkEvent, AssistantChunkData(turn=turn, step=1, chunk=TextDelta(index=1, text="short")))
    store = SessionStore(tmp_path, registry=default_registry())
    store.attach(session)
    store.close()
    loaded = store.load("p")
    assert [e.seq for e in loaded.events if e.type == "assistant/chunk"] == list(range(13, 17))  # the cut step's
    assert shown(replay(StoredLog(loaded.header, loaded.events))) == [
        "user_message_chunk Look.",
        "session_info_update Look.",
        "agent_thought_chunk Hmm, ",
        "agent_message_chunk On it.",
        "user_message_chunk More.",
        "agent_thought_chunk So then",
        "agent_message_chunk Cut short",
    ]


def test_a_child_sessions_compaction_is_replayed_as_it_showed_live() -> None:
    """With child sessions and compaction updates, a child's compaction comes back as
    `compaction_update`s on its own session, not as the card a client without them sees."""
    parent = Log("p", route="s1").user(TextContent(text="Go.")).model(calls=(("call_k", "subagent"),)).end()
    kid = Log("k", route="s1/call_k", spawn_call_id="call_k", parent="p").user(TextContent(text="Task."))
    kid.session.append(
        CompactionEvent, CompactionData(turn=kid.turn, summary="Sum", cut_seq=0, tokens=42, trigger="threshold")
    )
    kid.model(text="Done").end()
    stored = parent.stored(kid.stored())
    frames = history_updates(stored, TOOLS.get, TOOLS.get, context_window=1000, compaction=True, child_sessions=True)
    kid_updates = [SessionNotification(session_id=s, update=u).dump()["update"] for s, u in frames if s == "k"]
    assert [u["status"] for u in kid_updates if u["sessionUpdate"] == "compaction_update"] == ["completed"]
    assert not [u for u in kid_updates if u["sessionUpdate"] == "tool_call"]
