"""Every model-visible text of the subagent contract, verbatim, in one place."""

from __future__ import annotations

STRUCTURED_TOOL = "structured_output"
STRUCTURED_DESCRIPTION = (
    "Report your final structured result. Call this exactly once, when your answer is complete;"
    " the arguments must match this tool's parameter schema exactly."
)
STRUCTURED_INSTRUCTION = (
    "When you have your final answer, you MUST report it by calling the `structured_output` tool"
    " with arguments matching its parameter schema exactly. Do not finish with a plain text answer:"
    " only the tool call counts as your result."
)
STRUCTURED_SECTION_ORDER = 190
STRUCTURED_RECORDED = "Structured output recorded."


def structured_already_recorded(tool: str) -> str:
    return f"structured output already recorded: the run is complete, so `{tool}` is not executed."


DEPTH_INVALID = "agent subagentDepth must be a non-negative safe integer"
DEPTH_UNSAFE = "subagent child depth exceeds the safe-integer range"


def depth_exceeded(attempted: int, maximum: int) -> str:
    return f"subagent depth {attempted} exceeds maxDepth {maximum}"


RUN_CANCELLED = "subagent run was cancelled"
RUN_FAILED = "subagent run failed"
ACP_CHILD_FAILED = "acp_child"
"""The code of a turn an ACP child's process failed (it exited, broke the protocol): the parent
reads why after the headline."""


def run_failed_because(why: str) -> str:
    return f"{RUN_FAILED}: {why}"


RUN_TOKEN_LIMIT = "subagent run hit its token limit before finishing"


def run_abnormal(reason: str) -> str:
    return f"subagent run ended abnormally ({reason})"


def partial_output(text: str) -> str:
    return f"\nPartial output before the run ended:\n{text}"


# Background children: what the parent model reads of them, and the tools that reach them.
BACKGROUND_PARAM = (
    "Run the child in the background: the call answers at once with the child's agent id, the child"
    " works on while you go on, and you are told when it finishes (default false)."
)
REPORT_TOOL = "report"
REPORT_DESCRIPTION = (
    "Send the agent that started you an interim message without ending your work: a finding it"
    " should know now, or a question. It reads the message when it next thinks; your final answer"
    " still reaches it when you finish."
)
REPORT_MESSAGE = "The message for the agent that started you."
REPORT_SENT = "Reported."
SEND_MESSAGE_TOOL = "send_message"
SEND_MESSAGE_DESCRIPTION = (
    "Send a background agent a message: a new task or a follow-up. It continues its own conversation"
    " (a forked agent keeps what it inherited). An idle agent starts on it at once; a busy one reads"
    " it when its current turn ends. The call answers at once, or with `wait: true` with the agent's"
    " answer to this message."
)
AGENT_ID_PARAM = "The id of a background agent (as the call that started it answered, or list_agents shows)."
SEND_MESSAGE_PARAM = "The message, as the agent's next user message."
SEND_WAIT_PARAM = "Wait for the agent's answer to this message and return it (default false)."
LIST_AGENTS_TOOL = "list_agents"
LIST_AGENTS_DESCRIPTION = "List the background agents you started: their ids, states, descriptions and last activity."
NO_AGENTS = "No background agents."
STOP_AGENT_TOOL = "stop_agent"
STOP_AGENT_DESCRIPTION = (
    "Stop a background agent's current work (and the messages queued for it). You are told how it"
    " ended; you may send it a new message later."
)
STOPPED_BY_PARENT = "stopped by the agent that started it"
PARENT_CANCELLED_ALL = "the agent that started it was cancelled"
BACKGROUND_WITH_SCHEMA = "outputSchema cannot be used with run_in_background"


def background_started(agent_id: str, description: str) -> str:
    return (
        f"Started background agent {agent_id} ({description}). It works on its own; you will be"
        " told when it finishes. send_message gives it more to do, list_agents shows it, stop_agent"
        " stops it."
    )


def background_limit(limit: int) -> str:
    return f"at most {limit} background agents may run at once; wait for one to finish or stop one with stop_agent"


def background_unsupported(provider: str) -> str:
    return f"subagent provider {provider!r} cannot run a child in the background"


def unknown_agent(agent_id: str, known: list[str]) -> str:
    return f"no background agent {agent_id!r}; yours: {', '.join(known) or 'none'}"


def notice_settled(agent_id: str, description: str, result: str, is_error: bool) -> str:
    """`result`: the one-shot result's text (an error's without its `Error: `, added here)."""
    if is_error:
        return f"Background agent {agent_id} ({description}) ended:\nError: {result}"
    return f"Background agent {agent_id} ({description}) finished:\n{result}"


def notice_report(agent_id: str, description: str, message: str) -> str:
    return f"Background agent {agent_id} ({description}) reports, still working:\n{message}"


def message_sent(agent_id: str) -> str:
    return f"Message sent: {agent_id} is working on it. You will be told when it finishes."


def message_queued(agent_id: str) -> str:
    return f"Message queued: {agent_id} reads it when its current turn ends. You will be told when it finishes."


def agent_line(agent_id: str, state: str, description: str, activity: str) -> str:
    return f"- {agent_id} [{state}] {description}; last activity: {activity}"


NO_ACTIVITY = "none yet"


def activity_said(text: str) -> str:
    return f"said {text!r}"


def activity_called(tool: str) -> str:
    return f"called {tool}"


def stopped(agent_id: str) -> str:
    return f"Stopped {agent_id}; you are told how its work ended at your next step."


def not_running(agent_id: str, state: str) -> str:
    return f"{agent_id} is not running (its last turn: {state})."


# -- an ACP agent as a child (`acp.py`, `acp_client.py`): why it could not run ---------------------


def acp_not_started(title: str, why: str) -> str:
    return f"the ACP agent {title!r} could not be started: {why}"


def acp_start_timeout(title: str, seconds: float) -> str:
    return f"the ACP agent {title!r} did not start within {seconds:g} s (no answer to initialize and session/new)"


def acp_exited(title: str, code: int | None) -> str:
    how = "is still running but closed its output" if code is None else f"exited with code {code}"
    return f"the ACP agent {title!r} {how}; its stderr is in this server's log"


def acp_garbage(title: str, line: str) -> str:
    return f"the ACP agent {title!r} wrote something that is not JSON-RPC to its stdout: {line!r}"


def acp_error(title: str, message: str) -> str:
    return f"the ACP agent {title!r} answered with an error: {message}"
