"""`ask_user`: the model asks the user a question mid-turn and waits for the answer.

The asking belongs to whoever can reach the user (the ACP layer: `elicitation/create`, a form);
it gives the tool a `UserQuestions` and registers the tool for each session whose client can
answer, never for a child agent (a child's questions go in its final answer to its parent). The
user's reply (an answer, a refusal, a dismissal) is the call's result; a turn cancelled while the
question waits ends the call as any cancelled call ends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Literal

from pydantic import Field

from acp_agent.kernel.models import Model
from acp_agent.tools import texts
from acp_agent.tools.base import Tool, ToolCallContext, ToolParams, ToolPresentation, ToolResult
from acp_agent.tools.errors import ToolsError

# The parameter models' field descriptions are model-visible (the schema sent with every request).


class AskUserParams(ToolParams):
    """Arguments of ask_user."""

    question: str = Field(min_length=1, description="The question, as the user will read it.")
    options: list[str] | None = Field(
        default=None,
        min_length=1,
        description="Answers the user picks from (default: the user types the answer).",
    )
    multi_select: bool = Field(default=False, description="With options: the user may pick several.")


class Reply(Model):
    """What the user did with a question: `accept` with their `answer` (the text typed, the option
    picked, or the options picked for a multi-select question), `decline`, or `cancel` (the
    question dismissed without a choice)."""

    action: Literal["accept", "decline", "cancel"]
    answer: str | list[str] | None = None


class AskFailed(ToolsError):
    """The question could not be asked, or its reply not read: the message says why."""


class UserQuestions(ABC):
    """Whoever asks the user on the tool's behalf."""

    @abstractmethod
    async def ask(self, call: ToolCallContext, question: AskUserParams) -> Reply:
        """Ask and wait for the reply; `AskFailed` when that cannot be done."""


class AskUserTool(Tool[AskUserParams]):
    """Asks the user a question (see the module's docstring)."""

    name = "ask_user"
    description = texts.ASK_USER_DESCRIPTION
    Params = AskUserParams

    def __init__(self, questions: UserQuestions) -> None:
        self.questions = questions

    async def run(self, params: AskUserParams, call: ToolCallContext) -> ToolResult:
        try:
            reply = await self.questions.ask(call, params)
        except AskFailed as exc:
            return ToolResult.failure(texts.ask_failed(str(exc)), "ask_failed")
        if reply.action == "accept" and reply.answer is not None:
            return ToolResult.text(texts.user_answered(reply.answer))
        return ToolResult.text(texts.NO_ANSWER[reply.action])

    def present(self, params: AskUserParams) -> ToolPresentation:
        return ToolPresentation(title=texts.ask_title(params.question), kind="other")
