"""Every text of the permissions package that a model or a user reads."""

from __future__ import annotations

CANCELLED = "the permission request was cancelled"
"""The reason of a turn stopped by a cancelled permission request."""


def declined(tool: str) -> str:
    return f"the user declined to run this {tool} call"


def declined_always(tool: str) -> str:
    return f"the user declined to run this {tool} call: they chose to always reject {tool} calls in this session"


def plan_mode(tool: str) -> str:
    return (
        f"the session is in plan mode, which is read-only, so this {tool} call was not run;"
        " describe the change in your plan instead"
    )


def plan_escalation(tool: str) -> str:
    return (
        f"the session is in read-only mode, so this {tool} call may not run outside the sandbox and was not run;"
        " describe the change in your plan instead"
    )


def escalation_option_name(kind: str) -> str:
    """The label of an option of an escalation request (allow once, reject once only)."""
    return {"allow_once": "Allow once, without the sandbox", "reject_once": "Reject"}[kind]


def denied(tool: str) -> str:
    return f"the agent's permission policy does not allow {tool} calls, so this one was not run"


def no_asker(tool: str) -> str:
    return f"this {tool} call needs the user's approval, and no client is connected to ask them, so it was not run"


def ask_failed(tool: str, why: str) -> str:
    return f"this {tool} call needs the user's approval, and asking them failed ({why}), so it was not run"


def server_option_name(server: str) -> str:
    return f"Always allow every tool of {server}"


def option_name(kind: str, tool: str) -> str:
    """The label of a permission option, as the user sees it."""
    return {
        "allow_once": "Allow once",
        "allow_always": f"Always allow {tool}",
        "reject_once": "Reject once",
        "reject_always": f"Always reject {tool}",
    }[kind]
