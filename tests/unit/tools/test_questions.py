"""ask_user's card and the texts the model reads for each reply."""

from __future__ import annotations

import pytest

from acp_agent.tools.base import ToolCallContext
from acp_agent.tools.questions import AskUserParams, AskUserTool, Reply, UserQuestions
from tests.unit.tools.helpers import call_context

pytestmark = pytest.mark.anyio


class Replies(UserQuestions):
    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    async def ask(self, call: ToolCallContext, question: AskUserParams) -> Reply:
        return self.reply


def test_the_card_is_titled_by_the_question_on_one_line() -> None:
    tool = AskUserTool(Replies(Reply(action="cancel")))
    assert tool.present(AskUserParams(question="Which\n  colour?")).title == "Ask: Which colour?"
    long = tool.present(AskUserParams(question="word " * 30)).title
    assert len(long) == len("Ask: ") + 80 and long.endswith("…")
    assert "ask_user" not in tool.description and "options" in tool.description


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (Reply(action="accept", answer="blue"), "The user answered: blue"),
        (Reply(action="accept", answer=["a", "b"]), "The user picked: a, b"),
        (Reply(action="accept", answer=[]), "The user picked none of the options."),
        (Reply(action="accept"), "The user submitted the form without an answer."),
        (Reply(action="decline"), "The user declined to answer the question."),
        (Reply(action="cancel"), "The user dismissed the question without answering."),
    ],
)
async def test_each_reply_is_a_result_the_model_reads(reply: Reply, said: str) -> None:
    result = await AskUserTool(Replies(reply)).run(AskUserParams(question="?"), call_context())
    assert (result.plain_text(), result.is_error) == (said, False)
