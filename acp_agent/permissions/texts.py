"""Every text of the permissions package that a model or a user reads."""

from __future__ import annotations

from collections.abc import Sequence

from acp_agent.permissions.rules import SavedRule, ScopeRule

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


def prefix_option_name(kind: str, prefix: str) -> str:
    verb = "allow" if kind == "allow_always" else "reject"
    return f"Always {verb} commands starting with `{prefix}` in this project"


def rule_denied(prefix: str) -> str:
    return f"the user chose to always reject commands starting with `{prefix}` in this project, so this one was not run"


def settings_denied(rule: str, source: str) -> str:
    return f"the rule `{rule}` of {source} denies this call, so it was not run"


def settings_list(rules: Sequence[tuple[str, str, str]]) -> str:
    """`/permissions`: the Claude Code settings rules in force, with their files."""
    lines = ["Rules from Claude Code settings (a project's allow rules count once it is trusted):"]
    lines += [f"- {decision} `{text}` ({source})" for decision, text, source in rules]
    return "\n".join(lines)


def denied(tool: str) -> str:
    return f"the agent's permission policy does not allow {tool} calls, so this one was not run"


def no_asker(tool: str) -> str:
    return f"this {tool} call needs the user's approval, and no client is connected to ask them, so it was not run"


def ask_failed(tool: str, why: str) -> str:
    return f"this {tool} call needs the user's approval, and asking them failed ({why}), so it was not run"


def server_option_name(server: str) -> str:
    return f"Always allow every tool of {server}"


NO_RULES = (
    "No saved rules for this project ({project}). "
    'Answer an approval with "Always allow commands starting with ..." or "Always allow fetching from ..." '
    "to add one."
)


def saved_rule(rule: SavedRule) -> str:
    """One saved rule of a project, as `/permissions` lists it."""
    if isinstance(rule, ScopeRule):
        return f"allow {rule.tool} calls for `{rule.scope}`"
    return f"{rule.decision} commands starting with `{rule.prefix}`"


def rules_list(project: str, rules: Sequence[str]) -> str:
    """`/permissions`: the project's saved rules, numbered."""
    lines = [f"Saved rules for {project} (remove one with /permissions remove <n>):"]
    lines += [f"{n}. {rule}" for n, rule in enumerate(rules, 1)]
    return "\n".join(lines)


def rule_removed(rule: str) -> str:
    return f"Removed: {rule}."


def no_such_rule(arguments: str, count: int) -> str:
    if not count:
        return "There are no saved rules to remove."
    return (
        f"There is no rule {arguments}: "
        f"give /permissions remove and a number from 1 to {count} (/permissions lists them)."
    )


PERMISSIONS_DESCRIPTION = "List this project's saved command rules; /permissions remove <n> removes one"
PERMISSIONS_HINT = "remove <n>"
SANDBOX_DESCRIPTION = "Show how this session's commands are sandboxed"


def option_name(kind: str, tool: str) -> str:
    """The label of a permission option, as the user sees it."""
    return {
        "allow_once": "Allow once",
        "allow_always": f"Always allow {tool}",
        "reject_once": "Reject once",
        "reject_always": f"Always reject {tool}",
    }[kind]


def scratch_root(path: str) -> str:
    """The session's private temporary directory among `/sandbox`'s writable roots."""
    return f"{path} ($TMPDIR, the session's private temporary directory)"
