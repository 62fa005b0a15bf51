"""What a hook's run says, as Claude Code documents it (Codex speaks the same):

- exit 2: blocks, its stderr the reason;
- exit 0: stdout may be a JSON object: `continue` (false stops the turn, `stopReason` said to the
  user), `systemMessage` (said to the user), `decision: "block"` with `reason`, and
  `hookSpecificOutput` with `permissionDecision` (`allow` / `deny` / `ask`),
  `permissionDecisionReason`, `additionalContext`, `updatedInput`; for `UserPromptSubmit` and
  `SessionStart`, stdout that is not JSON is context for the model;
- any other exit (or a timeout): a non-blocking error, logged with its stderr.

Of several hooks of one event, deny beats ask beats allow, and contexts accumulate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from acp_agent.hooks import texts
from acp_agent.hooks.config import HookEvent
from acp_agent.hooks.runner import HookRun

Decision = Literal["deny", "ask", "allow"]
"""`deny` is also a block (of a prompt, a stop, a result)."""
_RANK: dict[Decision | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3}
_TEXT_CONTEXT: frozenset[HookEvent] = frozenset({"UserPromptSubmit", "SessionStart"})


@dataclass(frozen=True)
class Verdict:
    decision: Decision | None = None
    reason: str = ""
    contexts: tuple[str, ...] = ()
    updated_input: dict[str, Any] | None = None
    stop: str | None = None
    """`continue: false`: the turn ends, with this said to the user ("" when no reason given)."""
    messages: tuple[str, ...] = ()
    """`systemMessage`s: said to the user."""
    error: str | None = None
    """A non-blocking failure (exit code, timeout, unreadable output), for the log."""


def verdict_of(event: HookEvent, run: HookRun, timeout: float) -> Verdict:
    """What one run says."""
    if run.timed_out:
        return Verdict(error=texts.timed_out(timeout))
    if run.exit_code == 2:
        return Verdict(decision="deny", reason=run.stderr.strip() or texts.NO_REASON)
    if run.exit_code != 0:
        return Verdict(error=texts.failed(run.exit_code, run.stderr))
    stdout = run.stdout.strip()
    if not stdout:
        return Verdict()
    try:
        document = json.loads(stdout)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        if event in _TEXT_CONTEXT:
            return Verdict(contexts=(stdout,))
        return Verdict(error=texts.NOT_JSON) if stdout.startswith(("{", "[")) else Verdict()
    return _from_json(event, document)


def _from_json(event: HookEvent, document: dict[str, Any]) -> Verdict:
    specific = document.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision: Decision | None = None
    reason = _text(document.get("reason"))
    legacy = document.get("decision")
    if legacy in ("block", "deny"):
        decision = "deny"
    elif legacy in ("approve", "allow"):
        decision = "allow"
    chosen = specific.get("permissionDecision")
    if event == "PreToolUse" and chosen in ("allow", "deny", "ask"):
        decision, reason = chosen, _text(specific.get("permissionDecisionReason")) or reason
    if decision == "deny" and not reason:
        reason = texts.NO_REASON
    context = _text(specific.get("additionalContext"))
    updated = specific.get("updatedInput")
    stop = None
    if document.get("continue") is False:
        stop = _text(document.get("stopReason"))
    message = _text(document.get("systemMessage"))
    return Verdict(
        decision=decision,
        reason=reason,
        contexts=(context,) if context else (),
        updated_input=updated if isinstance(updated, dict) else None,
        stop=stop,
        messages=(message,) if message else (),
    )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def combine_verdicts(verdicts: Sequence[Verdict]) -> Verdict:
    """The verdict of several hooks of one event: the strongest decision (deny, ask, allow) with
    the reasons of the hooks that gave it; contexts and messages in order; the last `updatedInput`;
    the first stop."""
    decision = max((v.decision for v in verdicts), key=_RANK.__getitem__, default=None)
    reasons = [v.reason for v in verdicts if v.decision == decision and v.reason]
    updated = [v.updated_input for v in verdicts if v.updated_input is not None]
    stops = [v.stop for v in verdicts if v.stop is not None]
    return Verdict(
        decision=decision,
        reason="\n".join(reasons),
        contexts=tuple(c for v in verdicts for c in v.contexts),
        updated_input=updated[-1] if updated else None,
        stop=stops[0] if stops else None,
        messages=tuple(m for v in verdicts for m in v.messages),
    )
