"""A run's spending cap: ``--max-cost USD`` and ``--max-tokens N``.

Before each attempt is sent, its estimated cost and tokens are reserved: the prompt at
about four characters a token (:func:`~genir_eval.llm.providers.offline.approx_tokens`;
an exact count needs the provider's tokenizer, which a prompt's cost does not justify
importing) and the answer at the request's ``max_tokens``, the most it can be. An attempt
whose reservation would take what is spent and reserved past a cap is not sent: the engine
stops with the reason "budget" and the run is left failed and resumable (its finished
judgments are journaled). When the reply comes back its reservation is replaced by what it
used (the provider's counts, priced by the price table); an attempt that failed is counted
at its prompt's estimate (a provider may bill a request it did not answer), one with no
usable counts at its whole reservation. Every attempt reserves: retries and repeats count.

So what is spent never passes the cap by more than what the attempts in flight at the stop
used beyond their reservations, which is nothing unless a prompt's tokens were
under-estimated (``bench/bench_budget.py`` measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

from genir_eval.llm.prices import PriceTable
from genir_eval.llm.providers.base import Completion, Request, Usage
from genir_eval.llm.providers.offline import approx_tokens

__all__ = ["Budget", "Spend", "reserve", "settle"]


@dataclass
class Spend:
    """One attempt's reservation: its estimated cost and tokens, until it is settled."""

    cost: float
    tokens: int
    settled: bool = False


class Budget:
    """What a run may spend (``max_cost`` USD, ``max_tokens`` tokens; ``None``: no cap),
    what it has spent and what the attempts in flight have reserved. One object for every
    engine of a run, so the cap is the run's."""

    def __init__(self, max_cost: float | None = None, max_tokens: int | None = None) -> None:
        self.max_cost = max_cost
        self.max_tokens = max_tokens
        self.spent_cost = 0.0
        self.spent_tokens = 0
        self.reserved_cost = 0.0
        self.reserved_tokens = 0
        self.in_flight = 0
        self.refused: str | None = None

    def reserve(self, cost: float, tokens: int) -> Spend | None:
        """A reservation of ``cost`` USD and ``tokens``, or ``None`` when it would pass a
        cap (:attr:`refused` then says which and by how much)."""
        if self.max_cost is not None:
            total = self.spent_cost + self.reserved_cost + cost
            if total > self.max_cost:
                self.refused = (
                    f"the next call (about ${cost:.6f}) would take the spending to "
                    f"${total:.6f}, past --max-cost ${self.max_cost:g} (${self.spent_cost:.6f} "
                    f"spent, ${self.reserved_cost:.6f} in flight)"
                )
                return None
        if self.max_tokens is not None:
            total_tokens = self.spent_tokens + self.reserved_tokens + tokens
            if total_tokens > self.max_tokens:
                self.refused = (
                    f"the next call (about {tokens:,} tokens) would take the tokens to "
                    f"{total_tokens:,}, past --max-tokens {self.max_tokens:,} "
                    f"({self.spent_tokens:,} spent, {self.reserved_tokens:,} in flight)"
                )
                return None
        self.reserved_cost += cost
        self.reserved_tokens += tokens
        self.in_flight += 1
        return Spend(cost, tokens)

    def settle(self, spend: Spend, cost: float, tokens: int) -> None:
        """Replace ``spend``'s reservation by what the attempt used."""
        if spend.settled:
            return
        spend.settled = True
        self.reserved_cost -= spend.cost
        self.reserved_tokens -= spend.tokens
        self.in_flight -= 1
        self.spent_cost += cost
        self.spent_tokens += tokens

    def stats(self) -> dict[str, float | int | str | None]:
        return {
            "max_cost_usd": self.max_cost,
            "max_tokens": self.max_tokens,
            "spent_cost_usd": self.spent_cost,
            "spent_tokens": self.spent_tokens,
            "refused": self.refused,
        }


def reserve(
    budget: Budget | None, prices: PriceTable, provider: str, request: Request
) -> Spend | str | None:
    """An attempt's reservation in ``budget`` (``None``: no budget), or why it may not be
    sent (a cap it would pass, or an unknown price under ``--max-cost``)."""
    if budget is None:
        return None
    prompt = sum(approx_tokens(m.content) for m in request.messages)
    cost = prices.cost(provider, request.config.model, Usage(prompt, request.config.max_tokens))
    if cost is None and budget.max_cost is not None:
        budget.refused = (
            f"the price of {provider}/{request.config.model} is unknown, so no call can be held "
            "to --max-cost (give one with --prices FILE)"
        )
        return budget.refused
    spend = budget.reserve(cost or 0.0, prompt + request.config.max_tokens)
    return spend if spend is not None else budget.refused or "over the budget"


def settle(
    budget: Budget | None,
    prices: PriceTable,
    provider: str,
    spend: Spend | None,
    request: Request,
    completion: Completion | None,
) -> None:
    """Replace an attempt's reservation by what it used: the reply's counts, priced; a
    failed attempt (no ``completion``) at its prompt's estimate; a reply without usable
    counts at its whole reservation."""
    if budget is None or spend is None:
        return
    usage = completion.usage if completion is not None else None
    if usage is None:
        usage = Usage(sum(approx_tokens(m.content) for m in request.messages), 0)
    if not usage.known:
        budget.settle(spend, spend.cost, spend.tokens)
        return
    cost = prices.cost(provider, request.config.model, usage)
    budget.settle(spend, cost or 0.0, usage.input_tokens + usage.output_tokens)
