"""A scripted client end for the agent's own requests (fs, terminals): what `Connection.request`
would return or raise, without a connection."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from acp_agent.acp.errors import ClientError

Answer = Any | ClientError | Callable[[dict[str, Any]], Awaitable[Any]]
"""A result, an error to raise, or an async function of the params (to wait, or decide)."""


@dataclass
class FakeConnection:
    """Answers each method from `answers` (a list per method is used in order; the last one
    repeats); records every request as `(method, params)`."""

    answers: dict[str, Answer | list[Answer]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.requests.append((method, params))
        answer = self.answers.get(method, ClientError(-32601, f"Method not found: {method}"))
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if isinstance(answer, ClientError):
            raise answer
        if callable(answer):
            return await answer(params)
        return answer

    @property
    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]
