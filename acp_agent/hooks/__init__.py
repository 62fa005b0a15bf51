"""Hook scripts of Claude Code and Codex (and the agent's own `hooks.json`), run at the points of
a session those tools define: before and after a tool call, when a prompt is submitted, when a
turn stops, when a session or a subagent starts and when a subagent stops."""

from acp_agent.hooks.config import HookEvent, HookHandler, HookSet, HookSource, load_hooks
from acp_agent.hooks.matchers import Matcher, tool_names
from acp_agent.hooks.output import Verdict, combine_verdicts, verdict_of
from acp_agent.hooks.runner import HookRun, run_hook
from acp_agent.hooks.service import HOOKS, Hooks

__all__ = [
    "HOOKS",
    "HookEvent",
    "HookHandler",
    "HookRun",
    "HookSet",
    "HookSource",
    "Hooks",
    "Matcher",
    "Verdict",
    "combine_verdicts",
    "load_hooks",
    "run_hook",
    "tool_names",
    "verdict_of",
]
