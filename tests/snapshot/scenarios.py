"""The project's scenarios (fixtures/<name>/) and the modes each runs in: every one as its
input.json says; each one with a child agent's log whose client does not advertise child sessions
also as a client that does (`clientCapabilities.subagents`), so that its children show both on the
top-level session and as child sessions. A scenario written for child sessions (its input.json
advertises them: it cancels a child by its session id, say) runs in that mode only."""

from __future__ import annotations

import json

from tests.paths import FIXTURES

SCENARIOS = sorted(path.name for path in FIXTURES.iterdir() if (path / "input.json").is_file())
SESSIONS_SUFFIX = "+child-sessions"
"""A run with child sessions is named `<scenario>+child-sessions` (its snapshot too)."""


def has_children(name: str) -> bool:
    """Whether a log of the scenario (replayed, or stored for a load) is a child agent's."""
    directory = FIXTURES / name
    logs = [*directory.glob("session*.jsonl"), *directory.glob("sessions/*/session.jsonl")]
    return any("parentSession" in json.loads(path.read_text(encoding="utf-8").splitlines()[0]) for path in logs)


def advertises_sessions(name: str) -> bool:
    steps = json.loads((FIXTURES / name / "input.json").read_text(encoding="utf-8"))
    return (steps.get("clientCapabilities") or {}).get("subagents") is not None


CHILD_SCENARIOS = [name for name in SCENARIOS if has_children(name)]
RUNS: list[tuple[str, bool]] = sorted(
    {(name, advertises_sessions(name)) for name in SCENARIOS} | {(name, True) for name in CHILD_SCENARIOS}
)
"""Each run: (scenario, whether the client takes child sessions)."""


def run_id(name: str, child_sessions: bool) -> str:
    """The run's name: the scenario's, `+child-sessions` added when that mode is not its own."""
    return name + SESSIONS_SUFFIX if child_sessions and not advertises_sessions(name) else name
