"""The pure parts of compaction: derivation from the last compaction, the estimate, the plan, and
the model-visible texts, verbatim."""

from __future__ import annotations

import json
from typing import Any

from acp_agent.compaction import content_chars, estimate, plan, texts, without_oldest
from acp_agent.llm.request import AssistantMessage, ToolMessage, UserMessage, derive_messages
from acp_agent.llm.texts import SUMMARIZATION_PROMPT, SUMMARY_HEADING, framed_summary, summarization_prompt
from acp_agent.session import SessionEvent, default_registry
from acp_agent.session.content import ImageContent, ResourceLink, TextBlock, TextContent, ToolCallBlock

Line = dict[str, Any]


class Log:
    """Events built in order, checked by the invariants as they come."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self.turn = 0
        self._registry = default_registry()

    def add(self, type: str, **data: Any) -> SessionEvent:
        event = self._registry.parse({"type": type, "seq": len(self.events), "time": 0, "data": data})
        self.events.append(event)
        return event

    def open(self, prompt: str, source: str = "user") -> SessionEvent:
        self.turn += 1
        self.add("turn/start", turn=self.turn, trigger={"kind": "message"})
        return self.add("user/message", content=[{"type": "text", "text": prompt}], source={"kind": source})

    def step(
        self, step: int, answer: str, *, purpose: str | None = None, usage: Line | None = None, call: bool = False
    ) -> None:
        self.add("step/start", turn=self.turn, step=step, **({"purpose": purpose} if purpose else {}))
        content: list[Line] = [{"type": "text", "text": answer}]
        if call:
            content.append({"type": "tool-call", "id": f"c{self.turn}", "name": "bash", "arguments": "{}"})
        self.add("assistant/message", turn=self.turn, step=step, content=content, **({"usage": usage} if usage else {}))
        if call:
            self.add("tool/call", turn=self.turn, step=step, callId=f"c{self.turn}", name="bash", arguments="{}")
            self.add(
                "tool/result",
                turn=self.turn,
                step=step,
                callId=f"c{self.turn}",
                content=[{"type": "text", "text": "out"}],
                isError=False,
            )
        self.add("step/end", turn=self.turn, step=step)

    def close(self) -> None:
        self.add("turn/end", turn=self.turn, reason={"kind": "completed"})

    def compact(self, summary: str, cut_seq: int, tokens: int = 50) -> None:
        self.add("compaction", turn=self.turn, summary=summary, cutSeq=cut_seq, tokens=tokens, trigger="threshold")


def text(value: str) -> list[TextContent]:
    return [TextContent(text=value)]


def test_the_model_visible_texts_are_exactly_these() -> None:
    assert SUMMARIZATION_PROMPT == (
        "Stop here: this conversation no longer fits the context window, and it is about to be "
        "replaced by a summary that you write now. Another instance of you will carry on the work "
        "from that summary, with nothing else of the conversation before it in view. Write down: the "
        "user's requests and goals (in their own words where the wording matters); the decisions "
        "taken and why; what was done, with the files read, created or changed and the commands run, "
        "and what came of them; errors met and how they were resolved; what is still open, and the "
        "next step. Keep exact names, paths, identifiers, values and commands. Leave out what no "
        "longer matters. Do not call any tool: answer with the summary alone."
    )
    assert summarization_prompt(None) == SUMMARIZATION_PROMPT
    assert summarization_prompt("the API") == f"{SUMMARIZATION_PROMPT}\n\nFocus the summary on: the API"
    assert SUMMARY_HEADING == (
        "The earlier part of this conversation was compacted to fit the context window. This is the "
        "summary written for you to carry on from; the user's most recent messages, and everything "
        "after the compaction, follow as they were."
    )
    assert framed_summary("S.") == f"{SUMMARY_HEADING}\n\nS."
    assert texts.repeated(2) == (
        "This conversation has been compacted 2 times, and each compaction loses detail: for a fresh"
        " start, open a new thread."
    )


def test_derivation_starts_from_the_last_compaction_and_keeps_its_turn_whole() -> None:
    log = Log()
    log.open("one")
    log.step(1, "first answer")
    log.close()
    kept = log.open("two")
    log.step(1, "second answer")
    log.close()
    log.open("three")
    log.step(1, "calling", call=True)
    log.step(2, "The summary.", purpose="compaction")  # its message is never the model's
    log.compact("The summary.", cut_seq=kept.seq)
    log.step(3, "done")
    log.add("user/message", content=[{"type": "text", "text": "/compact"}], source={"kind": "command"})

    messages = derive_messages(log.events)

    assert messages == [
        UserMessage(content=text(framed_summary("The summary."))),
        UserMessage(content=text("two")),
        UserMessage(content=text("three")),
        AssistantMessage(content=[TextBlock(text="calling"), ToolCallBlock(id="c3", name="bash", arguments="{}")]),
        ToolMessage(call_id="c3", content=text("out")),
        AssistantMessage(content=[TextBlock(text="done")]),
    ]


def test_the_estimate_starts_from_the_last_reported_usage_or_compaction() -> None:
    log = Log()
    assert estimate(log.events) == 0
    log.open("x" * 40)
    assert estimate(log.events) == 10
    log.step(1, "answer", usage={"inputTokens": 100, "cacheReadTokens": 50, "outputTokens": 7}, call=True)
    assert estimate(log.events) == 157 + len("out") // 4
    log.add("step/start", turn=1, step=2)
    log.add("assistant/message", turn=1, step=2, content=[{"type": "text", "text": "y" * 8}], interrupted=True)
    log.add("step/end", turn=1, step=2)
    log.compact("s", cut_seq=0, tokens=30)
    assert estimate(log.events) == 30
    log.add("user/message", content=[{"type": "text", "text": "z" * 400}], source={"kind": "steer"})
    log.add("user/message", content=[{"type": "text", "text": "/compact"}], source={"kind": "command"})
    assert estimate(log.events) == 130
    log.add("step/start", turn=1, step=3)
    log.add("assistant/message", turn=1, step=3, content=[{"type": "text", "text": "w" * 40}], interrupted=True)
    assert estimate(log.events) == 140  # an answer cut off before its usage counts by its text
    link = ResourceLink(uri="file:///a", name="a")
    assert content_chars([ImageContent(data="AAAA", mime_type="image/png"), TextContent(text="ab"), link]) == (
        4002 + len(json.dumps(link.dump()))
    )


def test_a_plan_summarizes_before_the_turn_and_keeps_recent_prompts_in_the_budget() -> None:
    log = Log()
    log.open("/compact", source="command")
    assert plan(log.events, 100) is None  # nothing before the turn
    log.close()
    first = log.open("a" * 40)
    log.step(1, "one")
    log.close()
    second = log.open("b" * 40)
    log.step(1, "two")
    log.close()
    log.open("now")
    found = plan(log.events, 20)  # 80 characters: both prompts
    assert found is not None
    assert found.cut_seq == first.seq
    assert [m.role for m in found.history] == ["user", "assistant", "user", "assistant"]
    assert plan(log.events, 19).cut_seq == second.seq  # type: ignore[union-attr]
    assert plan(log.events, 0).cut_seq == log.events[-2].seq  # type: ignore[union-attr]  # none kept: the turn's start
    log.compact("S", cut_seq=second.seq)
    assert plan(log.events, 100) is None  # the compaction's own turn: nothing new before it
    log.close()
    log.open("later")
    again = plan(log.events, 100)
    assert again is not None
    # Never a prompt the last compaction summarized: the floor is its cut.
    assert again.cut_seq == second.seq
    assert [m.content for m in again.history if isinstance(m, UserMessage)] == [
        text(framed_summary("S")),
        text("b" * 40),
        text("now"),
    ]


def test_dropping_the_oldest_exchange_never_leaves_a_result_without_its_call() -> None:
    call = AssistantMessage(content=[ToolCallBlock(id="c", name="bash", arguments="{}")])
    history = [
        UserMessage(content=text("a")),
        call,
        ToolMessage(call_id="c", content=text("r")),
        UserMessage(content=text("b")),
    ]
    assert without_oldest(history) == [UserMessage(content=text("b"))]
    assert without_oldest(history[:3]) == []
