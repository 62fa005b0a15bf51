"""`decide`: hard limits, then the user's standing answers, then the mode, then the deployment."""

from __future__ import annotations

from typing import Any

import pytest

from acp_agent.permissions import Policy, Refuse, decide, texts

ASKED = dict(tool="bash", edits_files=False, mode="ask", grant=None, rule="ask")


@pytest.mark.parametrize(
    ("change", "verdict"),
    [
        ({}, "ask"),
        ({"rule": "allow"}, "run"),
        ({"rule": "deny"}, Refuse(texts.denied("bash"), "denied")),
        ({"rule": "deny", "grant": "allow"}, Refuse(texts.denied("bash"), "denied")),  # a deployment's deny is final
        ({"mode": "plan"}, Refuse(texts.plan_mode("bash"), "plan_mode")),
        ({"mode": "plan", "grant": "allow", "rule": "allow"}, Refuse(texts.plan_mode("bash"), "plan_mode")),
        ({"grant": "reject", "rule": "allow"}, Refuse(texts.declined_always("bash"), "declined")),
        ({"grant": "reject", "mode": "auto", "edits_files": True}, Refuse(texts.declined_always("bash"), "declined")),
        ({"grant": "allow"}, "run"),
        ({"mode": "auto"}, "ask"),  # auto runs file edits only
        ({"mode": "auto", "edits_files": True}, "run"),
        ({"mode": "some-future-mode"}, "ask"),
        ({"only_reads": True}, "ask"),  # a fetch asks in the ask mode
        ({"only_reads": True, "mode": "auto"}, "run"),
        ({"only_reads": True, "mode": "plan"}, "run"),  # it changes nothing: plan runs it
        ({"only_reads": True, "mode": "plan", "rule": "deny"}, Refuse(texts.denied("bash"), "denied")),
        ({"only_reads": True, "mode": "auto", "grant": "reject"}, Refuse(texts.declined_always("bash"), "declined")),
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
