"""Whether a replay gave each agent the script recorded for it: the prompts each route was asked.

The replay model serves every route the model calls its fixture recorded, without looking at the
request (DESIGN §8). So fixtures whose routes are mixed up (two concurrent children's logs with
their routes exchanged, a child matched to the wrong spawn call) replay without a replay error,
each agent reading another's answers. The harness closes that gap: after a replayed run, the user
messages of each route's log (after a fork's seed) must be those of the fixture the replay model
routed there, else the run fails with a `FixtureMismatch`. A recorded prompt naming the recording's
cwd (`{{cwd}}`: a skill's directory, say) names the run's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp_agent.llm.errors import ReplayError
from acp_agent.llm.replay import PRIMARY, read_jsonl
from acp_agent.llm.routes import assign_routes
from acp_agent.snapshot.errors import FixtureMismatch
from acp_agent.snapshot.normalize import CWD

REPORT = "replay: "
"""How a failure of the replay is reported (as the server reports its own replay errors)."""


def check_fixtures(directory: Path, logs: Mapping[str, list[Any]], cwd: Path) -> list[str]:
    """A failure for every route whose run log (of a run in `cwd`) was prompted otherwise than its
    fixture."""
    fixtures = _fixture_logs(directory)
    if PRIMARY not in fixtures:
        return []  # nothing is replayed (or the server reports the missing fixture itself)
    try:
        routes = assign_routes(fixtures, PRIMARY)
    except ReplayError:
        return []  # the server refuses these fixtures and says why
    failures = []
    for name, route in routes.items():
        run = logs.get(route)
        if run is None:
            continue  # an agent the run never created: unconsumed calls are the server's to report
        recorded = [prompt.replace(CWD, str(cwd)) for prompt in prompts(fixtures[name])]
        asked = prompts(run)
        if recorded != asked:
            error = FixtureMismatch(route, name, recorded, asked)
            failures.append(f"{REPORT}{type(error).__name__}: {error}")
    return failures


def prompts(lines: list[Any]) -> list[str]:
    """The text of each user message of a log (header first), after its fork seed."""
    header = lines[0] if lines and isinstance(lines[0], dict) else {}
    events = lines[1 + (header.get("seedLength") or 0) :]
    return [
        "".join(block.get("text", "") for block in event["data"]["content"] if isinstance(block, dict))
        for event in events
        if isinstance(event, dict) and event.get("type") == "user/message"
    ]


def _fixture_logs(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """The scenario's session logs by file name (other JSONL files, a golden transcript say, are
    not logs: a log opens with a session header)."""
    logs = {}
    for path in sorted(directory.glob("*.jsonl")):
        try:
            lines = read_jsonl(path)
        except (OSError, ValueError):
            continue  # the server reads the same files and reports what it cannot use
        if lines and isinstance(lines[0], dict) and lines[0].get("type") == "session":
            logs[path.name] = lines
    return logs
