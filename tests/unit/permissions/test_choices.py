"""The fold of a session's choices: the last mode, the last answer per tool, a fork seed skipped."""

from __future__ import annotations

from acp_agent.permissions import GrantEvent, ModeEvent, choices
from acp_agent.session import SessionHeader
from acp_agent.session.log import Session
from acp_agent.session.registry import default_registry


def session(seed_length: int | None = None, seed: list[object] = ()) -> Session:  # type: ignore[assignment]
    registry = default_registry()
    registry.register(ModeEvent, "free")
    registry.register(GrantEvent, "free")
    header = SessionHeader(id="s", created_at=0, seed_length=seed_length)
    return Session(header, registry=registry, seed=seed)  # type: ignore[arg-type]


def mode(value: str) -> dict[str, object]:
    return {"modeId": value, "source": {"kind": "user"}}


def test_the_last_mode_and_the_last_answer_per_tool_hold() -> None:
    log = session()
    assert (choices(log).mode, choices(log).grants) == (None, {})
    log.append(ModeEvent, mode("plan"))
    log.append(GrantEvent, {"tool": "bash", "decision": "allow"})
    assert (choices(log).mode, choices(log).grants) == ("plan", {"bash": "allow"})
    log.append(ModeEvent, mode("auto"))
    log.append(GrantEvent, {"tool": "bash", "decision": "reject"})
    log.append(GrantEvent, {"tool": "write_file", "decision": "allow"})
    folded = choices(log)
    assert (folded.mode, folded.grants, folded.read) == ("auto", {"bash": "reject", "write_file": "allow"}, 5)
    assert choices(log) is folded  # one fold per session, read on from where it stopped


def test_a_fork_seed_is_the_parents_history_not_the_childs_choices() -> None:
    parent = session()
    parent.append(ModeEvent, mode("plan"))
    parent.append(GrantEvent, {"tool": "bash", "decision": "allow"})
    child = session(seed_length=2, seed=list(parent.events))
    assert (choices(child).mode, choices(child).grants) == (None, {})
    child.append(ModeEvent, mode("auto"))
    assert choices(child).mode == "auto"
