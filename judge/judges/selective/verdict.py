"""A case's verdict and how sure a judge is of it, from its answers and their confidences.

The judge's verdict is the rubric's: each dimension's score is the share of Yes among its
scored questions, the composite their weighted sum, pass when it reaches the threshold. How
likely the labels' verdict is the same: if each answer agrees with the label with its
calibrated probability p (independently), the labels' Yes count in a dimension is a sum of
Bernoulli draws (p for a Yes answered, 1 - p for a No, 1/2 for a question the judge left
unscored), the labels' composite a weighted sum of those shares, and the verdict's confidence
the probability that composite falls on the judge's side of the threshold: computed exactly by
convolving the dimensions' count distributions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

TOLERANCE = 1e-9


class RubricShape(BaseModel):
    """What a verdict needs of a rubric: its dimensions' questions, weights and threshold."""

    threshold: float
    weights: dict[str, float]
    dimensions: dict[str, list[str]]

    @property
    def questions(self) -> list[str]:
        return [q for qs in self.dimensions.values() for q in qs]

    def same_as(self, other: RubricShape) -> bool:
        """The same dimensions, questions, weights and threshold (in any order)."""
        return (
            abs(self.threshold - other.threshold) <= TOLERANCE
            and self.weights.keys() == other.weights.keys()
            and all(abs(w - other.weights[d]) <= TOLERANCE for d, w in self.weights.items())
            and {d: set(q) for d, q in self.dimensions.items()}
            == {d: set(q) for d, q in other.dimensions.items()}
        )


def rubric_shape(rubric: Any) -> RubricShape:
    """The shape of a `Rubric` (with `--dimensions` applied)."""
    return RubricShape(
        threshold=float(rubric.scoring.threshold),
        weights={d: float(w) for d, w in rubric.scoring.weights.items()},
        dimensions={d.id: [q.id for q in d.questions] for d in rubric.dimensions},
    )


def judge_verdict(answers: Mapping[str, str | None], rubric: RubricShape) -> bool | None:
    """Pass or fail from `answers` (question id -> Yes/No/None); None when some dimension has
    no scored question (the case is incomplete)."""
    composite = 0.0
    for dimension, questions in rubric.dimensions.items():
        scored = [answers.get(q) for q in questions if answers.get(q) is not None]
        if not scored:
            return None
        composite += rubric.weights.get(dimension, 0.0) * scored.count("Yes") / len(scored)
    return composite >= rubric.threshold - TOLERANCE


def verdict_confidence(
    answers: Mapping[str, str | None],
    confidence: Mapping[str, float],
    rubric: RubricShape,
) -> float | None:
    """P(the labels' verdict equals the judge's), each answer agreeing with its label with
    probability `confidence[question]`; None when the judge has no verdict."""
    verdict = judge_verdict(answers, rubric)
    if verdict is None:
        return None
    composite: dict[float, float] = {0.0: 1.0}
    for dimension, questions in rubric.dimensions.items():
        weight = rubric.weights.get(dimension, 0.0)
        counts = _yes_counts([_p_yes(answers.get(q), confidence.get(q)) for q in questions])
        combined: dict[float, float] = {}
        for value, p in composite.items():
            for yes, q in enumerate(counts):
                if q:
                    key = round(value + weight * yes / len(questions), 12)
                    combined[key] = combined.get(key, 0.0) + p * q
        composite = combined
    passing = sum(p for value, p in composite.items() if value >= rubric.threshold - TOLERANCE)
    return min(1.0, max(0.0, passing if verdict else 1.0 - passing))


def _p_yes(answer: str | None, p_agree: float | None) -> float:
    if answer is None or p_agree is None:
        return 0.5
    return p_agree if answer == "Yes" else 1.0 - p_agree


def _yes_counts(p_yes: Sequence[float]) -> list[float]:
    """The Poisson-binomial distribution of the number of Yes labels."""
    counts = [1.0]
    for p in p_yes:
        nxt = [0.0] * (len(counts) + 1)
        for k, q in enumerate(counts):
            nxt[k] += q * (1.0 - p)
            nxt[k + 1] += q * p
        counts = nxt
    return counts
