"""`--max-cost` in batch mode: a submitted batch cannot be stopped by the live budget check, so
before a batch goes out its worst case must fit in what is left of the budget.

A line's worst case is its prompt tokens, counted as the live run counts them for its token
limiter (`judge.judges.llm.estimate_tokens`: characters / 4), plus the most completion tokens
the call may get (the least of the reply cap its request sends — the judge's `max_tokens`, else
its default cap for that many questions — and the model's `max_output_tokens` in litellm's price
map), at the batch price. Calls are taken in the run's order while they fit; the rest are
left out (not asked, never "No") and the run then stops as a live run past its budget does.
What was spent is the lines' real batch price once collected; lines still out count at their
worst case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Price = Callable[[int, int], float | None]
"""Batch price of (prompt tokens, completion tokens); None when unknown."""

BudgetedCall = tuple[str, list[dict[str, Any]], Sequence[str]]
"""A call as the budget sees it: its key, its messages, the ids of the questions it asks."""


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """A request's prompt tokens as the live run estimates them (without its reply allowance)."""
    from ...judges.llm import COMPLETION_ALLOWANCE, estimate_tokens

    return estimate_tokens(messages) - COMPLETION_ALLOWANCE


def completion_cap(
    params: dict[str, Any], model_info: dict[str, Any] | None, sent: int | None = None
) -> int | None:
    """The most completion tokens one call may get: the least of what its request asks for (an
    explicit `max_completion_tokens` or `max_tokens` in `params`, else `sent`, the cap the
    judge sends by default) and what the model can give; None when neither is known."""
    asked = _first_positive(params, ("max_completion_tokens", "max_tokens"))
    model = _first_positive(model_info or {}, ("max_output_tokens", "max_tokens"))
    known = [cap for cap in (asked or sent, model) if cap]
    return min(known) if known else None


def _first_positive(source: dict[str, Any], names: tuple[str, ...]) -> int | None:
    for name in names:
        value = source.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


@dataclass
class Fit:
    """What fits in the budget: the first `count` calls, their worst case, and why the rest
    (if any) do not."""

    count: int
    worst: float
    reason: str | None = None


@dataclass
class BatchBudget:
    """A run's `--max-cost` across its batches."""

    limit: float
    price: Price
    cap: Callable[[Sequence[str]], int | None]
    """The completion cap of a call asking these questions (`completion_cap`)."""
    spent: float = 0.0
    outstanding: dict[str, float] = field(default_factory=dict)
    """The worst case of each line submitted and not yet collected, by call key."""
    exhausted: str | None = None
    """Why calls were left out; set once, and no later batch is submitted."""

    def worst_case(self, messages: list[dict[str, Any]], questions: Sequence[str]) -> float | None:
        cap = self.cap(questions)
        if cap is None:
            return None
        return self.price(prompt_tokens(messages), cap)

    def fit(self, calls: Sequence[BudgetedCall]) -> Fit:
        """How many of `calls` (key, messages, question ids), in order, fit in what is left;
        their worst cases count as outstanding until `collected`."""
        if self.exhausted is not None:
            return Fit(0, 0.0, self.exhausted)
        left = self.limit - self.spent - sum(self.outstanding.values())
        taken = 0.0
        for count, (key, messages, questions) in enumerate(calls):
            worst = self.worst_case(messages, questions)
            if worst is None:
                return self._short(Fit(count, taken, self._unknown(questions)))
            if taken + worst > left + 1e-12:  # sums of float prices: the same amount fits
                return self._short(Fit(count, taken, self._over(calls, left)))
            taken += worst
            self.outstanding[key] = worst
        return Fit(len(calls), taken)

    def hold(self, key: str, messages: list[dict[str, Any]], questions: Sequence[str]) -> None:
        """A line of a resumed batch, still out: it counts at its worst case too."""
        self.outstanding[key] = self.worst_case(messages, questions) or 0.0

    def spend(self, cost: float | None) -> None:
        """A collected line's real batch price."""
        self.spent += cost or 0.0

    def settled(self, keys: Sequence[str]) -> None:
        """A batch's lines came back: their real prices (`spend`) replace their worst cases."""
        for key in keys:
            self.outstanding.pop(key, None)

    def _short(self, fit: Fit) -> Fit:
        self.exhausted = fit.reason
        return fit

    def _unknown(self, questions: Sequence[str]) -> str:
        what = "price" if self.cap(questions) is not None else "largest reply (max_output_tokens)"
        return (
            f"the batch {what} for this model is unknown, so the worst case of a batch cannot "
            f"be kept within --max-cost {self.limit:g}"
        )

    def _over(self, calls: Sequence[BudgetedCall], left: float) -> str:
        total = sum(self.worst_case(m, q) or 0.0 for _, m, q in calls)
        most = max(self.cap(q) or 0 for _, _, q in calls)
        return (
            f"a batch of all {len(calls)} calls could cost up to ${total:.4f} at the batch price "
            f"(prompt tokens as the live run estimates them, plus up to {most} completion "
            f"tokens a call), more than the ${max(left, 0.0):.4f} left of --max-cost "
            f"{self.limit:g}"
        )
