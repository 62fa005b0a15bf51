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
RUN_TOKEN_LIMIT = "subagent run hit its token limit before finishing"


def run_abnormal(reason: str) -> str:
    return f"subagent run ended abnormally ({reason})"


def partial_output(text: str) -> str:
    return f"\nPartial output before the run ended:\n{text}"
