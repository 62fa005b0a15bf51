"""Write a long stored session, as the server writes one: what `bench/load.py` loads.

Each turn is a prompt and two model calls: the first streams ~20 reasoning and ~20 text deltas
and calls `read_file`, whose result is logged; the second streams ~20 more text deltas and
answers. That is about 80 events a turn, 94% of them streamed chunks. The log is written through
the project's own `Session` and `SessionStore`, so it is exactly what the server would have kept.

    python bench/long_session.py SESSIONS_DIR [--events 100000] [--cwd DIR]

prints the new session's id (its log is `SESSIONS_DIR/<id>/session.jsonl`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import uuid
from pathlib import Path

from acp_agent.session import (
    AssistantChunkData,
    AssistantMessageData,
    BlockEnd,
    BlockStart,
    Finish,
    FinishReason,
    ReasoningBlock,
    ReasoningDelta,
    Session,
    SessionHeader,
    SessionStore,
    Source,
    StepData,
    StreamChunk,
    TextBlock,
    TextContent,
    TextDelta,
    ToolCallBlock,
    ToolCallData,
    ToolCallDelta,
    ToolResultData,
    Trigger,
    TurnCompleted,
    TurnEndData,
    TurnStartData,
    Usage,
    UsageChunk,
    UserMessageData,
    default_registry,
)
from acp_agent.session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)

WORDS = "the model reads the file and explains what the function does and why it matters here".split()


def _words(start: int, count: int) -> list[str]:
    return [f"{WORDS[(start + i) % len(WORDS)]} " for i in range(count)]


def _stream(session: Session, turn: int, step: int, chunks: list[StreamChunk]) -> None:
    for chunk in chunks:
        session.append(AssistantChunkEvent, AssistantChunkData(turn=turn, step=step, chunk=chunk))


def _deltas(index: int, kind: str, words: list[str]) -> list[StreamChunk]:
    """A block streamed word by word: its start, one delta per word, its end."""
    text = "".join(words)
    if kind == "reasoning":
        deltas: list[StreamChunk] = [ReasoningDelta(index=index, text=word) for word in words]
        block: ReasoningBlock | TextBlock = ReasoningBlock(text=text)
    else:
        deltas = [TextDelta(index=index, text=word) for word in words]
        block = TextBlock(text=text)
    return [BlockStart(index=index, block_type=kind), *deltas, BlockEnd(index=index, block=block)]  # type: ignore[arg-type]  # kind is "text" or "reasoning"


def _turn(session: Session, turn: int) -> None:
    session.append(TurnStartEvent, TurnStartData(turn=turn, trigger=Trigger(kind="message", source={"kind": "user"})))
    prompt = [TextContent(text=f"What does function number {turn} in src/app.py do?")]
    session.append(UserMessageEvent, UserMessageData(content=prompt, source=Source(kind="user")))
    usage = Usage(input_tokens=1000 + turn, output_tokens=120)

    # Step 1: think, say something, read a file.
    session.append(StepStartEvent, StepData(turn=turn, step=1))
    thought, said = _words(turn, 20), _words(turn + 3, 20)
    call_id = f"call_{turn}"
    arguments = json.dumps({"path": "src/app.py"})
    call = ToolCallBlock(id=call_id, name="read_file", arguments=arguments)
    chunks = [
        *_deltas(0, "reasoning", thought),
        *_deltas(1, "text", said),
        BlockStart(index=2, block_type="tool-call"),
        ToolCallDelta(index=2, id=call_id, name="read_file", arguments_delta=arguments),
        BlockEnd(index=2, block=call),
        UsageChunk(usage=usage),
        Finish(reason=FinishReason(kind="tool-calls")),
    ]
    _stream(session, turn, 1, chunks)
    content = [ReasoningBlock(text="".join(thought)), TextBlock(text="".join(said)), call]
    session.append(AssistantMessageEvent, AssistantMessageData(turn=turn, step=1, content=content, usage=usage))
    session.append(
        ToolCallEvent, ToolCallData(turn=turn, step=1, call_id=call_id, name="read_file", arguments=arguments)
    )
    body = "\n".join(f"def function_{n}(value):\n    return value * {n}" for n in range(turn % 7, turn % 7 + 5))
    result = ToolResultData(turn=turn, step=1, call_id=call_id, content=[TextContent(text=body)], is_error=False)
    session.append(ToolResultEvent, result)
    session.append(StepEndEvent, StepData(turn=turn, step=1))

    # Step 2: the answer.
    session.append(StepStartEvent, StepData(turn=turn, step=2))
    answer = _words(turn + 7, 20)
    _stream(
        session,
        turn,
        2,
        [*_deltas(0, "text", answer), UsageChunk(usage=usage), Finish(reason=FinishReason(kind="stop"))],
    )
    session.append(
        AssistantMessageEvent,
        AssistantMessageData(turn=turn, step=2, content=[TextBlock(text="".join(answer))], usage=usage),
    )
    session.append(StepEndEvent, StepData(turn=turn, step=2))
    session.append(TurnEndEvent, TurnEndData(turn=turn, reason=TurnCompleted()))


def write_session(root: Path, events: int, cwd: str) -> str:
    """A new session of whole turns, at least `events` events, stored under `root`; its id."""
    store = SessionStore(root, registry=default_registry())
    ticks = itertools.count(1_700_000_000_000)
    header = SessionHeader(id=str(uuid.uuid4()), created_at=next(ticks), cwd=cwd, route="s1")
    session = Session(header, registry=store.registry, clock=lambda: next(ticks))
    store.attach(session)
    try:
        turn = 0
        while session.next_seq < events:
            turn += 1
            _turn(session, turn)
    finally:
        store.close()
    return header.id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="the sessions directory")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--cwd", default=str(Path.cwd()))
    args = parser.parse_args()
    print(write_session(args.root, args.events, args.cwd))


if __name__ == "__main__":
    main()
