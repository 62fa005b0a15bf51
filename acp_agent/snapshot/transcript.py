"""Both directions of a run as one sequence: what the agent wrote, in the canonical order, with
each line the client wrote placed right after what its step waited for.

stdin and stdout are two streams: when a client line arrived relative to the agent's frames is
scheduling, not meaning. What is fixed is what the client waited for before writing it (the
request it answers, the response that ended the previous step, the chunk a cancel waited for),
kept by the client with each line (`RunResult.sent_after`). A line that waited for several frames
(a cancel once two children showed a tool call) goes after whichever of them comes last in the
canonical order, so the place does not depend on which child was faster.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from acp_agent.snapshot.frames import Frame, canonical_order, session_routes
from acp_agent.snapshot.result import RunResult

Direction = Literal["<<", ">>"]
AGENT: Direction = "<<"
"""Agent to client: a stdout frame."""
CLIENT: Direction = ">>"
"""Client to agent: a line the client wrote."""


@dataclass(frozen=True)
class Unparsed:
    """A line that is not JSON (a server bug the run reports, or garbage a scenario sends on
    purpose): kept as it is."""

    line: str


@dataclass(frozen=True)
class Line:
    direction: Direction
    frame: Frame
    """The parsed frame, or `Unparsed`."""


def parse(line: str) -> Frame:
    """A line's frame: an object or a batch; anything else is `Unparsed` (a fresh object per line,
    which the placing relies on)."""
    try:
        frame = json.loads(line)
    except ValueError:
        return Unparsed(line)
    return frame if isinstance(frame, (dict, list)) else Unparsed(line)


def interleave(result: RunResult) -> list[Line]:
    """The run's frames, both directions, in the order a snapshot shows them."""
    frames = [parse(line) for line in result.stdout]
    ordered = canonical_order(frames, session_routes(result.logs))
    position = {id(frame): place for place, frame in enumerate(ordered)}
    placed: dict[int, list[Frame]] = {}
    """The client's frames written after each agent frame (by its place; -1: before any)."""
    waited = result.sent_after + [()] * (len(result.sent) - len(result.sent_after))
    for line, after in zip(result.sent, waited, strict=False):
        place = max((position[id(frames[index])] for index in after), default=-1)
        placed.setdefault(place, []).append(parse(line))
    out = [Line(CLIENT, frame) for frame in placed.get(-1, [])]
    for place, frame in enumerate(ordered):
        out.append(Line(AGENT, frame))
        out += [Line(CLIENT, sent) for sent in placed.get(place, [])]
    return out
