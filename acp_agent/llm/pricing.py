"""What a model call costs: prices per million tokens, declared by a model entry of the agents row
or by the model adapter row (the entry wins), applied to the usage the provider reported."""

from __future__ import annotations

from acp_agent.kernel.models import Model
from acp_agent.session.content import Usage
from acp_agent.session.events import CallCost

PER = 1_000_000
"""Prices are per this many tokens."""


class Pricing(Model):
    """`input` (tokens not read from the provider's cache), `cached_input` (those read from it;
    default: `input`) and `output`, in `currency` per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    currency: str = "USD"

    def cost(self, usage: Usage) -> CallCost:
        cached = usage.cache_read_tokens or 0
        cached_price = self.input if self.cached_input is None else self.cached_input
        amount = (usage.input_tokens * self.input + cached * cached_price + usage.output_tokens * self.output) / PER
        return CallCost(amount=amount, currency=self.currency)
