"""`decide`: hard limits, then the user's standing answers, then the mode, then the deployment."""

from __future__ import annotations

from typing import Any

import pytest

from acp_agent.permissions import Policy, Refuse, decide, texts
from acp_agent.permissions.policy import Ask, Run

ASKED = dict(tool="bash", edits_files=False, mode="ask", grant=None, rule="ask", runs_commands=True)
RO, WW, FULL = "read-only", "workspace-write", "danger-full-access"


@pytest.mark.parametrize(
    ("change", "verdict"),
    [
        ({}, Ask(WW)),
        ({"rule": "allow"}, Run(WW)),  # allow skips the question, never the sandbox
        ({"rule": "deny"}, Refuse(texts.denied("bash"), "denied")),
        ({"rule": "deny", "grant": "allow", "mode": "full"}, Refuse(texts.denied("bash"), "denied")),  # final
        ({"mode": "plan"}, Run(RO)),  # plan explores: read-only, unasked
        ({"mode": "plan", "runs_commands": False}, Refuse(texts.plan_mode("bash"), "plan_mode")),
        (
            {"mode": "plan", "grant": "allow", "rule": "allow", "runs_commands": False, "edits_files": True},
            Refuse(texts.plan_mode("bash"), "plan_mode"),
        ),
        ({"grant": "reject", "rule": "allow"}, Refuse(texts.declined_always("bash"), "declined")),
        ({"grant": "reject", "mode": "auto", "edits_files": True}, Refuse(texts.declined_always("bash"), "declined")),
        ({"grant": "allow"}, Run(WW)),  # a stored "always allow bash": unasked, inside the sandbox
        ({"mode": "auto"}, Run(WW)),
        ({"mode": "auto", "runs_commands": False}, Ask()),  # an MCP tool still asks in auto
        ({"mode": "auto", "edits_files": True, "runs_commands": False}, Run()),
        ({"mode": "full"}, Run(FULL)),
        ({"mode": "full", "runs_commands": False}, Run()),
        ({"escalate": True, "grant": "allow", "rule": "allow"}, Ask(FULL, escalation=True)),  # always asks
        ({"escalate": True, "mode": "auto"}, Ask(FULL, escalation=True)),
        ({"escalate": True, "mode": "plan"}, Refuse(texts.plan_escalation("bash"), "plan_mode")),
        ({"escalate": True, "mode": "full"}, Run(FULL)),
        ({"only_reads": True, "runs_commands": False}, Ask()),  # a fetch asks in the ask mode
        ({"only_reads": True, "runs_commands": False, "mode": "auto"}, Run()),
        ({"only_reads": True, "runs_commands": False, "mode": "plan"}, Run()),  # it changes nothing: plan runs it
        (
            {"only_reads": True, "runs_commands": False, "mode": "plan", "rule": "deny"},
            Refuse(texts.denied("bash"), "denied"),
        ),
        (
            {"only_reads": True, "runs_commands": False, "mode": "auto", "grant": "reject"},
            Refuse(texts.declined_always("bash"), "declined"),
        ),
    ],
)
def test_the_verdict(change: dict[str, Any], verdict: Any) -> None:
    assert decide(**{**ASKED, **change}) == verdict


def test_a_tool_rule_overrides_the_default() -> None:
    policy = Policy(default="allow", tools={"bash": "deny"})
    assert (policy.rule("bash"), policy.rule("write_file")) == ("deny", "allow")
    assert Policy().rule("bash") == "ask"


def test_the_option_names_say_what_always_covers() -> None:
    names = [texts.option_name(kind, "bash") for kind in ("allow_once", "allow_always", "reject_once", "reject_always")]
    assert names == ["Allow once", "Always allow bash", "Reject once", "Always reject bash"]
    assert texts.escalation_option_name("allow_once") == "Allow once, without the sandbox"
