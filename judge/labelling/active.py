"""Active labelling (`judge labels serve --order informative`): which case to label next, drawn
so that the corrected estimate stays unbiased however the judge errs.

Uncertainty. A label helps most where the judge's verdict is most likely wrong (Zrnic and
Candès, "Active Statistical Inference", 2024: the variance is smallest when a case is drawn
with probability proportional to the root of its expected squared error, here
sqrt(P(verdict wrong))). P(verdict wrong) comes from the judge's own answers: each answer is
right with a probability its confidence gives (`ANSWER_RIGHT`; a number in [0.5, 1] as is), an
unscored question or one the judges split on (a panel's members, `--compare`) is a coin flip,
and the rubric's weights and threshold turn those into the chance that the labeller's
composite falls on the other side of the threshold. These probabilities need not be
calibrated: a poor guess costs precision, never validity (every case keeps a probability of
at least `floor` times the average, `agreement.labelling_probabilities`).

Design: nested Poisson sampling. Each case gets a uniform draw U_i (seeded, recorded). For an
expected number of labels b, π_i(b) = labelling_probabilities(u, b) and the sample S(b) is
{i : U_i < π_i(b)}: for a fixed b, an exact Poisson sample with known probabilities. π_i(b)
grows with b, so S(1) ⊆ S(2) ⊆ ... ⊆ S(N) (every case). The page shows the cases in the order
they join (their entry budget; within one, the most uncertain first). The estimate uses the
largest b whose S(b) is fully labelled, each label weighted by 1/π_i(b) (`active_ppi_mean`);
labels past it wait until their S(b) is complete. Stopping at a budget chosen beforehand
(`--sample N`: label S(N)) is exact; stopping anywhere makes b depend on the draw, a small
bias `tests/labelling/test_estimate.py` measures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel, Field

from agreement.ppi import DEFAULT_FLOOR, labelling_probabilities
from agreement.ratings import VERDICT

from .cases import LabelCase
from .labelset import CaseKey
from .store import StoreContents

ANSWER_RIGHT = {"High": 0.9, "Medium": 0.75, "Low": 0.6}
"""P(a judge's answer is right) by its stated confidence; with none stated, Medium's."""


class ActiveDesign(BaseModel):
    """The recorded draw of an informative session: every case's uncertainty, uniform draw
    and entry budget, and the questions a case needs answered to count as labelled."""

    kind: str = "nested poisson"
    seed: int
    floor: float = DEFAULT_FLOOR
    questions: list[str] = Field(description="Question ids (and verdict) of a labelled case.")
    cases: list[CaseKey]
    uncertainty: list[float] = Field(description="sqrt(P(the judge's verdict is wrong)).")
    draws: list[float] = Field(description="U_i, uniform on [0, 1).")
    entry: list[int] = Field(description="The smallest whole budget b with U_i < π_i(b).")

    def probabilities(self, budget: int) -> np.ndarray:
        return labelling_probabilities(self.uncertainty, budget, floor=self.floor)

    def order(self) -> list[int]:
        """Case indices in the order they join the sample, most uncertain first within a budget."""
        return sorted(range(len(self.cases)), key=lambda i: (self.entry[i], -self.uncertainty[i]))

    def completed(self, done: set[CaseKey]) -> int:
        """The largest budget whose sample is fully labelled (0 when the first is not)."""
        waiting = [e for key, e in zip(self.cases, self.entry, strict=True) if key not in done]
        return min(waiting, default=len(self.cases) + 1) - 1

    def inclusion(self, done: set[CaseKey]) -> dict[CaseKey, float]:
        """The probability of each case of the largest fully labelled sample."""
        budget = min(self.completed(done), len(self.cases))
        if budget < 1:
            return {}
        pi = self.probabilities(budget)
        return {key: float(pi[i]) for i, key in enumerate(self.cases) if self.entry[i] <= budget}

    def done(self, contents: StoreContents) -> set[CaseKey]:
        """Cases of the design with every question answered in the store (Unsure counts)."""
        return {
            key
            for key in self.cases
            if all(
                (rec := contents.answers.get((*key, q))) is not None and rec.answer is not None
                for q in self.questions
            )
        }


def draw_design(
    cases: Sequence[LabelCase],
    weights: dict[str, float],
    threshold: float,
    seed: int,
    floor: float = DEFAULT_FLOOR,
) -> ActiveDesign:
    """The nested Poisson draw over `cases` (each with a judge verdict), seeded."""
    u = [float(np.sqrt(verdict_wrong(c, weights, threshold))) for c in cases]
    draws = np.random.default_rng(seed).random(len(cases))
    entry = entry_budgets(u, draws, floor)
    questions = [q.id for q in cases[0].questions] if cases else []
    for case in cases[1:]:
        ids = {q.id for q in case.questions}
        questions = [q for q in questions if q in ids]
    return ActiveDesign(
        seed=seed,
        floor=floor,
        questions=questions,
        cases=[(c.incident_id, c.trial) for c in cases],
        uncertainty=u,
        draws=draws.tolist(),
        entry=entry.tolist(),
    )


def entry_budgets(uncertainty: Sequence[float], draws: np.ndarray, floor: float) -> np.ndarray:
    """For each case, the smallest whole budget b with draw < π(b), π as
    `labelling_probabilities` gives it: min(1, c(b) w) with w = max(u, floor x mean u) and
    Σ π = b. A case joins once the scale c passes t = draw / w, that is once b exceeds
    B(t) = Σ_j min(1, t w_j), so its entry is floor(B(t)) + 1 (at most N)."""
    u = np.asarray(uncertainty, dtype=float)
    n = len(u)
    w = np.maximum(u, floor * u.mean()) if n and u.mean() > 0 else np.ones(n)
    t = draws / w
    ordered = np.sort(w)
    below = np.concatenate([[0.0], np.cumsum(ordered)])
    with np.errstate(divide="ignore"):
        uncapped = np.searchsorted(ordered, 1 / t, side="left")  # w_j < 1/t: t w_j < 1
    budget = (n - uncapped) + t * below[uncapped]
    return np.minimum(np.floor(budget).astype(int) + 1, n)


def answer_right(confidence: object) -> float:
    """P(an answer is right) from its confidence: a label, a number, or nothing."""
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        return float(np.clip(confidence, 0.5, 1.0))
    return ANSWER_RIGHT.get(str(confidence), ANSWER_RIGHT["Medium"])


def verdict_wrong(case: LabelCase, weights: dict[str, float], threshold: float) -> float:
    """P(the labeller's verdict differs from the judge's), the judge's answers taken as right
    with the probability their confidence gives."""
    yes_chances: dict[str, list[float]] = defaultdict(list)
    for q in case.questions:
        if q.id == VERDICT or q.dimension_id not in weights:
            continue
        answer = case.judge.get(q.id)
        if answer is None or answer.answer is None or q.id in case.split_questions:
            p = 0.5
        else:
            right = answer_right(answer.confidence)
            p = right if answer.answer == "Yes" else 1 - right
        yes_chances[q.dimension_id].append(p)
    passes = _pass_probability(yes_chances, weights, threshold)
    return 1 - passes if case.verdict == "Yes" else passes


def _pass_probability(
    yes_chances: dict[str, list[float]], weights: dict[str, float], threshold: float
) -> float:
    composites = {0.0: 1.0}
    for dim, chances in yes_chances.items():
        counts = _count_distribution(chances)
        step = weights[dim] / len(chances)
        merged: dict[float, float] = defaultdict(float)
        for value, p in composites.items():
            for k, pk in enumerate(counts):
                merged[round(value + step * k, 12)] += p * pk
        composites = merged
    return float(sum(p for v, p in composites.items() if v >= threshold - 1e-9))


def _count_distribution(chances: Iterable[float]) -> list[float]:
    """P(k Yes answers) for independent questions with these chances of Yes."""
    dist = [1.0]
    for p in chances:
        dist = [
            (dist[k] if k < len(dist) else 0.0) * (1 - p) + (dist[k - 1] * p if k else 0.0)
            for k in range(len(dist) + 1)
        ]
    return dist
