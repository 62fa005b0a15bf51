"""The OpenAI wire without a network: request bodies, SSE cutting, events -> stream chunks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_agent.llm import codes, texts
from acp_agent.llm.errors import LlmError
from acp_agent.llm.openai_wire import (
    RequestOptions,
    SseDecoder,
    StreamFailure,
    StreamTranslator,
    chat_request,
    content_text,
    encode,
    excerpt,
    new_call_id,
    reasoning_carried,
    wire_messages,
)
from acp_agent.llm.request import AssistantMessage, LlmRequest, ToolMessage, ToolSchema, UserMessage
from acp_agent.session.content import (
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ReasoningBlock,
    ResourceLink,
    StreamChunk,
    TextBlock,
    TextContent,
    TextResourceContents,
    ToolCallBlock,
)
from tests.paths import UPSTREAM

from .openai_server import DONE, chunk, content, finish, reasoning, tool, tools
from .recorded_sse import as_sse, recorded_calls

# --- request bodies -----------------------------------------------------------------------------


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def call(call_id: str, arguments: str = '{"command": "ls"}') -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name="bash", arguments=arguments)


def result(call_id: str, text: str) -> ToolMessage:
    return ToolMessage(call_id=call_id, content=[TextContent(text=text)])


def llm_request(*messages: Any, **fields: Any) -> LlmRequest:
    base: dict[str, Any] = {
        "provider": "deepseek",
        "model": "deepseek-chat",
        "system": "You are terse.",
        "messages": list(messages),
        "route": "s1",
        "session_id": "session-1",
    }
    return LlmRequest(**{**base, **fields})


BASH = ToolSchema(
    name="bash",
    description="Run a command.",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)


def test_a_tool_turn_is_sent_as_system_user_assistant_tool_calls_and_tool_results() -> None:
    request = llm_request(
        UserMessage(content=[TextContent(text="look at"), ResourceLink(uri="file:///etc/hosts", name="hosts")]),
        AssistantMessage(
            content=[
                ReasoningBlock(text="I should list."),
                TextBlock(text="Listing."),
                call("call_1"),
                call("call_2", ""),
            ]
        ),
        result("call_1", "a\nb"),
        ToolMessage(call_id="call_2", content=[], is_error=True),
        AssistantMessage(content=[ReasoningBlock(text="Done now."), TextBlock(text="Two files.")]),
        tools=[BASH],
        max_tokens=512,
    )

    body = chat_request(
        request, RequestOptions(max_tokens=9, temperature=0.2, reasoning_effort="high", thinking="enabled")
    )

    assert body == {
        "model": "deepseek-chat",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "look at\n[@hosts](file:///etc/hosts)"},
            {
                "role": "assistant",
                "content": "Listing.",
                "reasoning_content": "I should list.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                    },
                    {"id": "call_2", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "a\nb"},
            {"role": "tool", "tool_call_id": "call_2", "content": ""},
            # Same turn (no user message since the tool call): its reasoning goes back too.
            {"role": "assistant", "content": "Two files.", "reasoning_content": "Done now."},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {"name": "bash", "description": "Run a command.", "parameters": BASH.parameters},
            }
        ],
        "max_tokens": 512,
        "temperature": 0.2,
        "reasoning_effort": "high",
        "thinking": {"type": "enabled"},
    }


def test_defaults_leave_out_what_is_not_configured_and_extra_body_has_the_last_word() -> None:
    request = llm_request(user("hi"), system="", model="")

    assert chat_request(request, RequestOptions()) == {
        "model": "",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    body = chat_request(
        request, RequestOptions(model="fallback", max_tokens=64, extra_body={"stream_options": None, "seed": 7})
    )
    assert body["model"] == "fallback"
    assert body["max_tokens"] == 64
    assert body["stream_options"] is None and body["seed"] == 7


def test_the_chosen_thought_level_is_the_reasoning_effort_over_the_adapters() -> None:
    options = RequestOptions(reasoning_effort="high")
    assert chat_request(llm_request(user("hi"), reasoning_effort="low"), options)["reasoning_effort"] == "low"
    assert chat_request(llm_request(user("hi")), options)["reasoning_effort"] == "high"
    assert "reasoning_effort" not in chat_request(llm_request(user("hi")), RequestOptions())


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_images_go_to_a_vision_model_as_data_urls_and_are_named_to_others() -> None:
    image = ImageContent(data=PIXEL, mime_type="image/png")
    message = UserMessage(
        content=[TextContent(text="What is"), TextContent(text="this?"), image, TextContent(text="Thanks.")]
    )
    seen = encode(chat_request(llm_request(message, system="", vision=True), RequestOptions()))
    assert (
        seen
        == (
            '{"model":"deepseek-chat","messages":[{"role":"user","content":['
            '{"type":"text","text":"What is\\nthis?"},'
            '{"type":"image_url","image_url":{"url":"data:image/png;base64,' + PIXEL + '"}},'
            '{"type":"text","text":"Thanks."}]}],"stream":true,"stream_options":{"include_usage":true}}'
        ).encode()
    )
    # A model without vision (chosen after the image was sent) reads that an image was there.
    blind = chat_request(llm_request(message, system=""), RequestOptions())
    assert blind["messages"] == [{"role": "user", "content": "What is\nthis?\n[image omitted: image/png]\nThanks."}]
    only = chat_request(llm_request(UserMessage(content=[image]), system="", vision=True), RequestOptions())
    assert only["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
    ]
    assert (
        chat_request(llm_request(user("no image"), vision=True), RequestOptions())["messages"][1]["content"]
        == "no image"
    )
    assert image.size == 70


def test_a_tool_results_images_follow_the_steps_tool_messages_as_a_user_message() -> None:
    image = ImageContent(data=PIXEL, mime_type="image/png")
    request = llm_request(
        user("Look."),
        AssistantMessage(content=[call("call_1"), call("call_2"), call("call_3")]),
        ToolMessage(call_id="call_1", content=[TextContent(text="a.png: image/png"), image]),
        result("call_2", "plain"),
        ToolMessage(call_id="call_3", content=[TextContent(text="b.png"), image, image]),
        AssistantMessage(content=[call("call_4")]),
        ToolMessage(call_id="call_4", content=[TextContent(text="c.png"), image]),
        system="",
        model="m",
        vision=True,
    )
    url = '{"type":"image_url","image_url":{"url":"data:image/png;base64,' + PIXEL + '"}}'
    calls = ",".join(
        f'{{"id":"call_{n}","type":"function","function":{{"name":"bash","arguments":"{{\\"command\\": \\"ls\\"}}"}}}}'
        for n in (1, 2, 3)
    )
    assert (
        encode(chat_request(request, RequestOptions()))
        == (
            '{"model":"m","messages":[{"role":"user","content":"Look."},'
            '{"role":"assistant","content":null,"tool_calls":[' + calls + "]},"
            '{"role":"tool","tool_call_id":"call_1","content":"a.png: image/png"},'
            '{"role":"tool","tool_call_id":"call_2","content":"plain"},'
            '{"role":"tool","tool_call_id":"call_3","content":"b.png"},'
            '{"role":"user","content":[{"type":"text","text":"[The image(s) returned by tool call call_1:]"},'
            + url
            + ","
            '{"type":"text","text":"[The image(s) returned by tool call call_3:]"},' + url + "," + url + "]},"
            '{"role":"assistant","content":null,"tool_calls":[{"id":"call_4","type":"function","function":'
            '{"name":"bash","arguments":"{\\"command\\": \\"ls\\"}"}}]},'
            '{"role":"tool","tool_call_id":"call_4","content":"c.png"},'
            '{"role":"user","content":[{"type":"text","text":"[The image(s) returned by tool call call_4:]"},'
            + url
            + "]}],"
            '"stream":true,"stream_options":{"include_usage":true}}'
        ).encode()
    )
    # A model without vision (chosen after the image was read) reads that an image was there.
    blind = wire_messages(request.model_copy(update={"vision": False}))
    assert [message["role"] for message in blind] == ["user", "assistant", "tool", "tool", "tool", "assistant", "tool"]
    assert blind[2]["content"] == "a.png: image/png\n[image omitted: image/png]"


def test_unanswered_tool_calls_and_messages_left_empty_are_not_sent() -> None:
    # A stream cut while a call was being written: the call has no result, the message no text.
    request = llm_request(
        user("go"),
        AssistantMessage(content=[ReasoningBlock(text="Let me"), call("call_cut", '{"comm')]),
        user("again"),
        AssistantMessage(content=[TextBlock(text="Partial answer"), call("call_cut2")]),
    )

    assert wire_messages(request)[1:] == [
        {"role": "user", "content": "go"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "Partial answer"},
    ]


def test_reasoning_goes_back_for_turns_with_tool_calls_only_by_default() -> None:
    messages = [
        user("one"),
        AssistantMessage(content=[ReasoningBlock(text="r1"), TextBlock(text="plain answer")]),
        user("two"),
        AssistantMessage(content=[ReasoningBlock(text="r2"), call("c1")]),
        result("c1", "out"),
        AssistantMessage(content=[ReasoningBlock(text="r3"), TextBlock(text="done")]),
        user("three"),
        AssistantMessage(content=[ReasoningBlock(text="r4"), TextBlock(text="bye")]),
    ]

    assert reasoning_carried(messages, "tool-turns") == {3, 5}
    assert reasoning_carried(messages, "all") == {1, 3, 5, 7}
    assert reasoning_carried(messages, "none") == set()
    sent = wire_messages(llm_request(*messages), "tool-turns")
    assert [m.get("reasoning_content") for m in sent if m["role"] == "assistant"] == [None, "r2", "r3", None]
    assert [
        m.get("reasoning_content") for m in wire_messages(llm_request(*messages), "none") if m["role"] == "assistant"
    ] == [None] * 4


def test_bodies_are_compact_utf8() -> None:
    assert encode({"text": "héllo 中文 😀", "n": [1, 2]}) == '{"text":"héllo 中文 😀","n":[1,2]}'.encode()
    assert (
        content_text([TextContent(text="a"), ResourceLink(uri="https://x.org/y", name="y")])
        == "a\n[@y](https://x.org/y)"
    )


def test_embedded_resources_are_sent_as_their_text_or_described() -> None:
    notes = EmbeddedResource(resource=TextResourceContents(uri="file:///p/a.md", text="# A\nship it\n"))
    logo = EmbeddedResource(
        resource=BlobResourceContents(uri="file:///p/logo.png", blob="A" * 2732, mime_type="image/png")
    )
    raw = EmbeddedResource(resource=BlobResourceContents(uri="file:///p/x.bin", blob="AAE="))
    assert content_text([TextContent(text="see"), notes, logo, raw]) == (
        "see\n[resource file:///p/a.md]\n# A\nship it\n\n[end of resource file:///p/a.md]"
        "\n[resource file:///p/logo.png: image/png, 2.0 KB]"
        "\n[resource file:///p/x.bin: application/octet-stream, 2 bytes]"
    )
    assert (logo.resource.size, raw.resource.size) == (2049, 2)


def test_sizes_under_1_kb_are_in_bytes() -> None:
    sizes = [1, 6, 1023, 1024, 10239, 10240, 5 * 1024 * 1024]
    assert [texts.data_size(size) for size in sizes] == [
        "1 byte", "6 bytes", "1023 bytes", "1.0 KB", "10.0 KB", "10 KB", "5120 KB"
    ]  # fmt: skip


# --- server-sent events -------------------------------------------------------------------------


def test_events_are_cut_at_blank_lines_whatever_the_line_ends_and_fields() -> None:
    decoder = SseDecoder()
    stream = (
        b": keep-alive\n\n"
        b"data: one\n\n"
        b"data:two\r\n\r\n"
        b"event: message\nid: 7\nretry: 10\ndata: three\ndata:  four\n\n"
        b"\n\n\n"
        b"data: [DONE]"
    )

    assert decoder.feed(stream) == [b"one", b"two", b"three\n four"]
    assert decoder.close() == [b"[DONE]"]
    assert decoder.close() == []


@pytest.mark.parametrize(
    "pieces",
    [
        [b'data: {"a"', b": 1}\n", b"\n"],
        [b"da", b'ta: {"a": 1}\r', b"\n\r", b"\n"],
        [b'data: {"a": 1}\n\r', b"\n"],
        [b'data: {"a": 1}', b"\n\n"],
    ],
)
def test_an_event_split_anywhere_comes_out_whole_once(pieces: list[bytes]) -> None:
    decoder = SseDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    assert events == [b'{"a": 1}']
    assert decoder.close() == []


def test_the_last_event_without_its_blank_line_still_counts_at_the_end() -> None:
    for tail in (b"data: [DONE]", b"data: [DONE]\n", b"data: [DONE]\r\n", b"data: [DONE]\r"):
        decoder = SseDecoder()
        assert decoder.feed(b"data: x\n\n" + tail) == [b"x"]
        assert decoder.close() == [b"[DONE]"]
    decoder = SseDecoder()
    decoder.feed(b": comment only")
    assert decoder.close() == []


SAMPLE = b"".join(
    [
        b": keep-alive\r\n\r\n",
        reasoning("Thinking é"),
        content("中文 and 😀 emoji"),
        tools(tool(0, '{"command": "echo \\u00e9"}', id="call_0", name="bash")),
        finish("tool_calls"),
        DONE,
    ]
)


@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=12))
def test_any_split_of_a_stream_gives_the_same_events_and_chunks(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(SAMPLE)]
    decoder, translator = SseDecoder(), StreamTranslator()
    chunks = [c for a, b in zip(bounds, bounds[1:], strict=False) for c in translator.feed(decoder.feed(SAMPLE[a:b]))]
    chunks += translator.feed(decoder.close())

    whole = StreamTranslator()
    assert dumps(chunks) == dumps(whole.feed(SseDecoder().feed(SAMPLE)))
    assert translator.done


# --- events -> chunks ---------------------------------------------------------------------------


def events(*frames: bytes) -> list[bytes]:
    return SseDecoder().feed(b"".join(frames))


def dumps(chunks: list[StreamChunk]) -> list[dict[str, Any]]:
    return [c.dump() for c in chunks]


def translate(*frames: bytes) -> list[dict[str, Any]]:
    translator = StreamTranslator()
    out = translator.feed(events(*frames))
    assert translator.done
    return dumps(out)


def test_reasoning_text_and_a_tool_call_become_blocks_in_order_of_appearance() -> None:
    out = translate(
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        reasoning("Let me"),
        reasoning(" think."),
        content("Running"),
        tools(tool(0, "", id="call_a", name="bash")),
        tools(tool(0, '{"command":')),
        tools(tool(0, ' "ls"}')),
        finish("tool_calls"),
        DONE,
    )

    assert out == [
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "reasoning-delta", "index": 0, "text": "Let me"},
        {"type": "reasoning-delta", "index": 0, "text": " think."},
        {"type": "block-start", "index": 1, "blockType": "text"},
        {"type": "text-delta", "index": 1, "text": "Running"},
        {"type": "block-start", "index": 2, "blockType": "tool-call"},
        {"type": "tool-call-delta", "index": 2, "id": "call_a", "name": "bash", "argumentsDelta": ""},
        {"type": "tool-call-delta", "index": 2, "id": "call_a", "name": "bash", "argumentsDelta": '{"command":'},
        {"type": "tool-call-delta", "index": 2, "id": "call_a", "name": "bash", "argumentsDelta": ' "ls"}'},
        {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "Let me think."}},
        {"type": "block-end", "index": 1, "block": {"type": "text", "text": "Running"}},
        {
            "type": "block-end",
            "index": 2,
            "block": {"type": "tool-call", "id": "call_a", "name": "bash", "arguments": '{"command": "ls"}'},
        },
        {
            "type": "usage",
            "usage": {"inputTokens": 122, "outputTokens": 95, "cacheReadTokens": 768, "reasoningTokens": 23},
        },
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]


def test_interleaved_parallel_tool_calls_are_keyed_by_their_wire_index() -> None:
    out = translate(
        chunk({"tool_calls": [tool(0, "", id="call_x", name="bash"), tool(1, '{"c', id="call_y", name="read")]}),
        tools(tool(1, 'md": 1}')),
        tools(tool(0, '{"command": "pwd"}')),
        finish("tool_calls"),
        DONE,
    )

    ends = [c["block"] for c in out if c["type"] == "block-end"]
    assert ends == [
        {"type": "tool-call", "id": "call_x", "name": "bash", "arguments": '{"command": "pwd"}'},
        {"type": "tool-call", "id": "call_y", "name": "read", "arguments": '{"cmd": 1}'},
    ]
    assert [(c["index"], c["argumentsDelta"]) for c in out if c["type"] == "tool-call-delta"] == [
        (0, ""),
        (1, '{"c'),
        (1, 'md": 1}'),
        (0, '{"command": "pwd"}'),
    ]


def test_lenient_tool_calls_no_id_no_index_late_name_object_arguments() -> None:
    out = translate(
        chunk({"tool_calls": [{"function": {"arguments": ""}}]}),  # no index, no id, no name yet
        chunk({"tool_calls": [{"index": 0, "function": {"name": "bash", "arguments": {"command": "ls"}}}]}),
        chunk({"tool_calls": [{"index": 0, "function": None}]}),
        finish("stop"),  # some servers say stop after tool calls
        DONE,
    )

    [end] = [c["block"] for c in out if c["type"] == "block-end"]
    assert end["id"].startswith("call_") and len(end["id"]) == 29
    assert end["name"] == "bash" and end["arguments"] == '{"command": "ls"}'
    deltas = [c for c in out if c["type"] == "tool-call-delta"]
    assert "name" not in deltas[0] and deltas[1]["name"] == "bash"
    assert out[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}
    assert new_call_id() != new_call_id()


def test_reasoning_under_the_name_reasoning_and_usage_in_a_final_event_of_its_own() -> None:
    # vLLM / OpenRouter spell it `reasoning`; OpenAI sends usage after the finish, with no choices.
    openai_usage = {"prompt_tokens": 50, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 32}}
    out = translate(
        chunk({"reasoning": "hm"}),
        content("Hi"),
        chunk({}, finish="stop"),
        chunk(usage=openai_usage, choices=False),
        DONE,
    )

    assert out[-2:] == [
        {"type": "usage", "usage": {"inputTokens": 18, "outputTokens": 7, "cacheReadTokens": 32}},
        {"type": "finish", "reason": {"kind": "stop"}},
    ]
    assert translate(content("x"), finish("stop", usage={"prompt_tokens": 5, "completion_tokens": 1}), DONE)[-2] == {
        "type": "usage",
        "usage": {"inputTokens": 5, "outputTokens": 1},
    }
    assert translate(content("x"), finish("stop", usage=None), DONE)[-2]["type"] == "block-end"


@pytest.mark.parametrize(
    ("reason", "said", "expected"),
    [
        ("stop", True, {"kind": "stop"}),
        ("tool_calls", True, {"kind": "stop"}),
        ("length", True, {"kind": "max-tokens"}),
        ("length", False, {"kind": "max-tokens"}),
        (
            "stop",
            False,
            {
                "kind": "error",
                "code": "EMPTY_RESPONSE",
                "message": "the model ended its answer without any content (finish_reason 'stop')",
            },
        ),
        (
            "content_filter",
            True,
            {"kind": "error", "code": "CONTENT_FILTER", "message": "the provider's content filter stopped the answer"},
        ),
        (
            "insufficient_system_resource",
            True,
            {"kind": "error", "code": "SERVER", "message": "the provider ran out of resources mid-answer"},
        ),
        (
            "eos_token",
            True,
            {"kind": "error", "code": "MALFORMED_RESPONSE", "message": "unknown finish_reason 'eos_token'"},
        ),
    ],
)
def test_finish_reasons(reason: str, said: bool, expected: dict[str, Any]) -> None:
    out = translate(*([content("x")] if said else []), chunk({"content": ""}, finish=reason), DONE)
    assert out[-1] == {"type": "finish", "reason": expected}


def test_empty_deltas_open_no_block_and_nothing_after_the_finish_reason_or_done_counts() -> None:
    translator = StreamTranslator()
    out = translator.feed(
        events(
            chunk({"role": "assistant", "content": "", "reasoning_content": None}),
            content("only"),
            finish("stop"),
            content(" ignored"),
            DONE,
            content(" after done"),
        )
    )
    assert [c.type for c in out] == ["block-start", "text-delta", "block-end", "usage", "finish"]
    assert translator.feed(events(content("more"))) == []


def test_an_error_event_is_a_stream_failure_with_its_status() -> None:
    with pytest.raises(StreamFailure) as caught:
        StreamTranslator().feed(events(content("x"), b'data: {"error": {"message": "overloaded", "code": 503}}\n\n'))
    assert caught.value.status == 503
    assert caught.value.error == {"message": "overloaded", "code": 503}
    with pytest.raises(StreamFailure) as caught:
        StreamTranslator().feed(events(b'data: {"error": {"message": "boom", "code": "server_error"}}\n\n'))
    assert caught.value.status is None


@pytest.mark.parametrize(
    "frame",
    [
        b"data: {not json\n\n",
        b"data: [1, 2]\n\n",
        b'data: {"choices": [{"delta": {"content": 5}}]}\n\n',
        b'data: {"choices": [{"delta": {"tool_calls": [7]}}]}\n\n',
        b'data: {"choices": "none"}\n\n',
        b'data: {"choices": [], "usage": {"prompt_tokens": "many"}}\n\n',
        b"data: \xff\xfe\n\n",
    ],
)
def test_an_unparsable_event_is_a_malformed_response(frame: bytes) -> None:
    with pytest.raises(LlmError) as caught:
        StreamTranslator().feed(events(frame))
    assert caught.value.code == codes.MALFORMED_RESPONSE
    assert caught.value.message.startswith("unparsable event in the model stream: ")


def test_done_without_a_finish_reason_is_malformed() -> None:
    with pytest.raises(LlmError) as caught:
        StreamTranslator().feed(events(content("x"), DONE))
    assert (caught.value.code, caught.value.message) == (
        codes.MALFORMED_RESPONSE,
        "the model stream ended ([DONE]) without a finish_reason",
    )


def test_excerpts_are_short() -> None:
    assert excerpt(b"abc") == "abc"
    assert excerpt("x" * 300) == "x" * 200 + "..."


# --- the recorded DeepSeek streams, rebuilt as SSE, come back as they were recorded -------------


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="shared upstream scenarios absent")
@pytest.mark.parametrize(("label", "recorded"), recorded_calls() or [("none", [])])
def test_a_recorded_deepseek_call_translates_back_to_its_recorded_chunks(
    label: str, recorded: list[StreamChunk]
) -> None:
    assert translate(as_sse(recorded)) == dumps(recorded), label


def test_text_and_reasoning_in_one_delta_each_go_to_their_block() -> None:
    out = translate(chunk({"content": "said", "reasoning_content": "thought"}), finish("stop"), DONE)
    assert [c["block"] for c in out if c["type"] == "block-end"] == [
        {"type": "text", "text": "said"},
        {"type": "reasoning", "text": "thought"},
    ]
