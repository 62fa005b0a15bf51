from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from acp_agent.llm.request import (
    AssistantMessage,
    LlmRequest,
    Messages,
    ToolMessage,
    ToolSchema,
    UserMessage,
    derive_messages,
)
from acp_agent.session import default_registry, read_log
from acp_agent.session.content import ReasoningBlock, ResourceLink, TextBlock, TextContent, ToolCallBlock
from tests.paths import UPSTREAM

from .builders import Log, Step, call_chunks, text_chunks


def test_messages_are_derived_from_the_log_alone() -> None:
    log = Log("p")
    log.turn(
        "list files", Step(call_chunks("c1", "bash", {"command": "ls"}), {"c1": "a.txt"}), Step(text_chunks("one file"))
    )
    log.add("turn/start", turn=2, trigger={"kind": "message", "source": {"kind": "user"}})
    log.add(
        "user/message",
        content=[
            {"type": "text", "text": "and this?"},
            {"type": "resource_link", "uri": "file:///b.md", "name": "b.md"},
        ],
        source={"kind": "user"},
    )
    log.add("step/start", turn=2, step=1)
    # A step interrupted before anything was said logs an empty message: nothing for the model.
    log.add("assistant/message", turn=2, step=1, content=[], interrupted=True)
    log.add("step/end", turn=2, step=1)
    log.add("turn/end", turn=2, reason={"kind": "aborted"})
    registry = default_registry()

    messages = derive_messages([registry.parse(line) for line in log.lines[1:]])

    assert messages == [
        UserMessage(content=[TextContent(text="list files")]),
        AssistantMessage(content=[ToolCallBlock(id="c1", name="bash", arguments='{"command": "ls"}')]),
        ToolMessage(call_id="c1", content=[TextContent(text="a.txt")]),
        AssistantMessage(content=[TextBlock(text="one file")]),
        UserMessage(content=[TextContent(text="and this?"), ResourceLink(uri="file:///b.md", name="b.md")]),
    ]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="shared upstream scenarios absent")
def test_messages_of_an_upstream_tool_call_turn() -> None:
    loaded = read_log(UPSTREAM / "tool-call-turn" / "session.jsonl", default_registry())

    messages = derive_messages(loaded.events)

    assert [message.role for message in messages] == ["user", "assistant", "tool", "assistant"]
    user, calling, result, answer = messages
    assert isinstance(user, UserMessage) and isinstance(calling, AssistantMessage)
    assert isinstance(result, ToolMessage) and isinstance(answer, AssistantMessage)
    assert user.content[0].text.startswith("Use the bash tool to run exactly: echo SNAPSHOT_OK.")  # type: ignore[union-attr]
    reasoning, call = calling.content
    assert isinstance(reasoning, ReasoningBlock) and reasoning.text.startswith("The user wants me to run")
    assert isinstance(call, ToolCallBlock)
    assert (call.id, call.name) == ("call_00_7bmU1TAadx8ADiZJ3BqC9330", "bash")
    assert '"echo SNAPSHOT_OK"' in call.arguments
    assert result == ToolMessage(call_id=call.id, content=[TextContent(text="SNAPSHOT_OK\n")], is_error=False)
    assert answer.content[-1] == TextBlock(text="DONE")


def test_a_request_dumps_in_camel_case() -> None:
    request = LlmRequest(
        provider="deepseek",
        model="deepseek-chat",
        system="sys",
        messages=[ToolMessage(call_id="c1", content=[TextContent(text="boom")], is_error=True)],
        tools=[ToolSchema(name="bash", description="run", parameters={"type": "object"})],
        max_tokens=100,
        route="s1/c1",
        session_id="abc",
    )

    dumped = request.dump()

    assert dumped["messages"] == [
        {"role": "tool", "callId": "c1", "content": [{"type": "text", "text": "boom"}], "isError": True}
    ]
    assert (dumped["maxTokens"], dumped["sessionId"], dumped["route"]) == (100, "abc", "s1/c1")
    assert LlmRequest.model_validate(dumped) == request


def test_a_request_validates_a_plain_list_keeping_its_message_models_as_they_are() -> None:
    messages: list[Any] = [UserMessage(content=[TextContent(text="hi")])]
    request = LlmRequest(provider="p", model="m", system="s", messages=messages, route="s1", session_id="a")
    assert request.messages[0] is messages[0]  # looked at, not copied
    dumped = {"provider": "p", "model": "m", "system": "s", "route": "s1", "sessionId": "a"}
    read = LlmRequest.model_validate(
        {**dumped, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    )
    assert read.messages == messages
    with pytest.raises(ValidationError):
        LlmRequest.model_validate({**dumped, "messages": [*messages, {"role": "nobody"}]})
    assert type(derive_messages([])) is Messages  # a derivation's models are taken without a look


def test_a_request_takes_the_conversations_messages_without_a_look_at_each() -> None:
    """Checking each message of the thread was itself a cost that grew with the thread: `Messages`
    are taken as they are, so what goes in them must be models (the conversation's only are)."""
    conversation = Messages([UserMessage(content=[TextContent(text="hi")])])
    taken = LlmRequest(provider="p", model="m", system="s", messages=conversation, route="s1", session_id="a")
    assert taken.messages is conversation
    assert taken.dump()["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    unlooked: list[Any] = [*conversation, {"role": "nobody"}]
    assert LlmRequest(
        provider="p", model="m", system="s", messages=Messages(unlooked), route="s1", session_id="a"
    ).messages[-1] == {"role": "nobody"}
    with pytest.raises(ValidationError):  # the same in a plain list is looked at
        LlmRequest(provider="p", model="m", system="s", messages=unlooked, route="s1", session_id="a")
