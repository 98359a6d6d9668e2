"""Confidence calibration: how often a judge's answer agrees with the labels at each confidence.

A judge's raw confidence (a log-probability, a vote share among k samples, a stated "High") is
a score, not a probability. `fit_confidence_calibration` turns it into one: from (raw confidence,
agreed-with-the-label) pairs it fits a non-decreasing map to the observed rate of agreement
(scikit-learn's `IsotonicRegression`, `out_of_bounds="clip"`), one map per (judge, question)
that has enough labelled answers, falling back to the judge's own pooled map, then to one map
pooled over every judge. Given each answer's value (Yes/No), a map per (judge, question, answer)
and per (judge, answer) comes first: a judge's Yes and its No at the same raw confidence can
be right at very different rates (one that credits shared vocabulary errs on its Yes answers),
and one map for both would hide it. The maps are plain thresholds and values (pydantic), so a calibration
file holds them and `predict` needs no scikit-learn.

`reliability_diagram` and `expected_calibration_error` measure how far a confidence is from the
agreement rate it claims, over equal-width bins of [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from agreement.arrays import FloatArray, as_bools, as_unit, same_length

DEFAULT_MIN_COUNT = 30
DEFAULT_BINS = 10

Level = Literal["question-answer", "answer", "question", "judge", "pooled"]


class IsotonicMap(BaseModel):
    """A fitted non-decreasing map from raw confidence to the probability of agreeing.

    Between two thresholds the value is interpolated linearly; below the first and above the
    last it is the end value (scikit-learn's `out_of_bounds="clip"`), so `predict` equals
    `IsotonicRegression.predict` of the fitted model.
    """

    thresholds: list[float] = Field(description="Raw confidences where the map changes slope.")
    values: list[float] = Field(description="P(agree) at each threshold, non-decreasing.")
    n: int = Field(description="Labelled answers the map was fitted on.")
    n_agreed: int = Field(description="Of those, answers that agreed with the label.")

    def predict(self, confidence: npt.ArrayLike) -> FloatArray:
        """Calibrated P(agree) for each raw confidence in [0, 1]."""
        x = as_unit(confidence, "confidence")
        return np.interp(x, self.thresholds, self.values)


class QuestionMap(BaseModel):
    """The map fitted on one judge's answers to one question (those answers `answer` only)."""

    judge: str
    question: str
    map: IsotonicMap
    answer: str | None = Field(None, description="None: the question's answers of any value.")


class AnswerMap(BaseModel):
    """The map fitted on one judge's answers of one value (Yes or No), every question."""

    judge: str
    answer: str
    map: IsotonicMap


class ConfidenceCalibration(BaseModel):
    """Calibration maps per (judge, question), per judge and pooled, and the fallback rule.

    An answer takes the first map that exists among: its (judge, question, answer) and its
    (judge, answer), when the maps were fitted by answer; its (judge, question); its judge's;
    the map pooled over every judge's answers. A map exists when at least `min_count` labelled
    answers were there to fit it.
    """

    min_count: int
    pooled: IsotonicMap
    judges: dict[str, IsotonicMap] = Field(description="Judges with at least min_count answers.")
    questions: list[QuestionMap] = Field(description="Pairs with at least min_count answers.")
    answers: list[AnswerMap] = Field(
        default_factory=list,
        description="(judge, answer) pairs with at least min_count answers; empty when the "
        "maps were fitted without the answers' values (as before they were).",
    )

    def map_for(
        self, judge: str, question: str, answer: str | None = None
    ) -> tuple[IsotonicMap, Level]:
        """The map that applies to `judge`'s `answer` to `question`, and which level it is."""
        if answer is not None:
            for entry in self.questions:
                if (entry.judge, entry.question, entry.answer) == (judge, question, answer):
                    return entry.map, "question-answer"
            for by_answer in self.answers:
                if (by_answer.judge, by_answer.answer) == (judge, answer):
                    return by_answer.map, "answer"
        for entry in self.questions:
            if (entry.judge, entry.question, entry.answer) == (judge, question, None):
                return entry.map, "question"
        if judge in self.judges:
            return self.judges[judge], "judge"
        return self.pooled, "pooled"

    def predict(
        self,
        confidence: npt.ArrayLike,
        judges: Sequence[str],
        questions: Sequence[str],
        answers: Sequence[str | None] | None = None,
    ) -> FloatArray:
        """Calibrated P(agree) per answer, each with the map `map_for` picks for it."""
        x = as_unit(confidence, "confidence")
        values = list(answers) if answers is not None else [None] * len(x)
        same_length(
            len(x),
            judges=np.asarray(judges),
            questions=np.asarray(questions),
            answers=np.asarray(values, dtype=object),
        )
        out = np.empty(len(x))
        for (judge, question, answer), index in _groups(judges, questions, values).items():
            out[index] = self.map_for(judge, question, answer)[0].predict(x[index])
        return out


def fit_isotonic(confidence: npt.ArrayLike, agreed: npt.ArrayLike) -> IsotonicMap:
    """Fit one non-decreasing map from raw confidence to P(agree), values clipped to [0, 1].

    Args:
        confidence: raw confidences in [0, 1], one per labelled answer.
        agreed: whether each answer agreed with the label (bool or 0/1), same length.

    Returns:
        The fitted map. With a single distinct confidence it is constant (the agreement rate).

    Raises:
        ValueError: no answers, a confidence outside [0, 1] or missing, or lengths that differ.
    """
    from sklearn.isotonic import IsotonicRegression  # imported late: it costs seconds

    x = as_unit(confidence, "confidence")
    y = as_bools(agreed, "agreed", len(x))
    if len(x) == 0:
        raise ValueError("confidence: expected at least one labelled answer, got none")
    model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    model.fit(x, y.astype(float))
    return IsotonicMap(
        thresholds=[float(v) for v in model.X_thresholds_],
        values=[float(v) for v in model.y_thresholds_],
        n=len(x),
        n_agreed=int(y.sum()),
    )


def fit_confidence_calibration(
    confidence: npt.ArrayLike,
    agreed: npt.ArrayLike,
    judges: Sequence[str],
    questions: Sequence[str],
    *,
    answers: Sequence[str] | None = None,
    min_count: int = DEFAULT_MIN_COUNT,
) -> ConfidenceCalibration:
    """Fit calibration maps per (judge, question), per judge and pooled over all answers.

    Args:
        confidence: raw confidences in [0, 1], one per labelled answer.
        agreed: whether each answer agreed with the label.
        judges, questions: the judge and question of each answer.
        answers: each answer's value (Yes/No); given, maps per (judge, question, answer) and
            per (judge, answer) are fitted too, and `predict` prefers them.
        min_count: the fewest labelled answers a (judge, question) or a judge needs for a map of
            its own (see `ConfidenceCalibration` for the fallback rule). At least 1.

    Returns:
        The maps; every judge and question, even one never seen, gets a map from `map_for`.

    Raises:
        ValueError: no answers, bad values, lengths that differ, or min_count < 1.
    """
    if min_count < 1:
        raise ValueError(f"min_count: expected at least 1, got {min_count}")
    x = as_unit(confidence, "confidence")
    y = as_bools(agreed, "agreed", len(x))
    same_length(len(x), judges=np.asarray(judges), questions=np.asarray(questions))
    pooled = fit_isotonic(x, y)
    per_judge = {}
    for (judge,), index in _groups(judges).items():
        if len(index) >= min_count:
            per_judge[judge] = fit_isotonic(x[index], y[index])
    per_question = [
        QuestionMap(judge=judge, question=question, map=fit_isotonic(x[index], y[index]))
        for (judge, question), index in _groups(judges, questions).items()
        if len(index) >= min_count
    ]
    per_answer: list[AnswerMap] = []
    if answers is not None:
        same_length(len(x), answers=np.asarray(answers))
        per_question += [
            QuestionMap(judge=j, question=q, answer=a, map=fit_isotonic(x[index], y[index]))
            for (j, q, a), index in _groups(judges, questions, answers).items()
            if len(index) >= min_count
        ]
        per_answer = [
            AnswerMap(judge=j, answer=a, map=fit_isotonic(x[index], y[index]))
            for (j, a), index in _groups(judges, answers).items()
            if len(index) >= min_count
        ]
    return ConfidenceCalibration(
        min_count=min_count,
        pooled=pooled,
        judges=per_judge,
        questions=per_question,
        answers=per_answer,
    )


class ReliabilityBin(BaseModel):
    """One equal-width bin of confidence: (lower, upper], the first bin [0, upper]."""

    lower: float
    upper: float
    count: int
    mean_confidence: float | None = Field(description="None when the bin is empty.")
    observed_agreement: float | None = Field(description="None when the bin is empty.")


class ReliabilityDiagram(BaseModel):
    """Per-bin confidence against observed agreement, and the expected calibration error."""

    n: int
    n_bins: int
    ece: float = Field(description="Sum over bins of count/n * |mean confidence - agreement|.")
    bins: list[ReliabilityBin]


def reliability_diagram(
    confidence: npt.ArrayLike, agreed: npt.ArrayLike, n_bins: int = DEFAULT_BINS
) -> ReliabilityDiagram:
    """Reliability-diagram data over `n_bins` equal-width bins of [0, 1].

    Bin b holds the confidences in (b/n_bins, (b+1)/n_bins], the first bin includes 0.0: the
    same binning as `sklearn.calibration.calibration_curve(strategy="uniform")`, whose
    `prob_pred` and `prob_true` are this diagram's non-empty `mean_confidence` and
    `observed_agreement`.

    Args:
        confidence: confidences in [0, 1] (raw or calibrated), one per labelled answer.
        agreed: whether each answer agreed with the label.
        n_bins: number of bins, at least 1.

    Returns:
        Every bin, empty ones included (count 0, means None), and the ECE.

    Raises:
        ValueError: no answers, bad values, lengths that differ, or n_bins < 1.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins: expected at least 1, got {n_bins}")
    x = as_unit(confidence, "confidence")
    y = as_bools(agreed, "agreed", len(x))
    if len(x) == 0:
        raise ValueError("confidence: expected at least one labelled answer, got none")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.searchsorted(edges[1:-1], x, side="left")
    counts = np.bincount(which, minlength=n_bins)
    conf_sums = np.bincount(which, weights=x, minlength=n_bins)
    agree_sums = np.bincount(which, weights=y.astype(float), minlength=n_bins)
    bins = []
    ece = 0.0
    for b in range(n_bins):
        count = int(counts[b])
        mean_conf = conf_sums[b] / count if count else None
        agreement = agree_sums[b] / count if count else None
        if mean_conf is not None and agreement is not None:
            ece += count / len(x) * abs(mean_conf - agreement)
        bins.append(
            ReliabilityBin(
                lower=float(edges[b]),
                upper=float(edges[b + 1]),
                count=count,
                mean_confidence=None if mean_conf is None else float(mean_conf),
                observed_agreement=None if agreement is None else float(agreement),
            )
        )
    return ReliabilityDiagram(n=len(x), n_bins=n_bins, ece=float(ece), bins=bins)


def expected_calibration_error(
    confidence: npt.ArrayLike, agreed: npt.ArrayLike, n_bins: int = DEFAULT_BINS
) -> float:
    """Expected calibration error over `n_bins` equal-width bins of [0, 1].

    ECE = sum over bins b of (n_b / n) * |mean confidence in b - share agreed in b|, with the
    bins of `reliability_diagram`. 0 is perfectly calibrated; at most 1.

    Raises:
        ValueError: as `reliability_diagram`.
    """
    return reliability_diagram(confidence, agreed, n_bins).ece


def _groups(*keys: Sequence[Any]) -> dict[tuple[Any, ...], list[int]]:
    out: dict[tuple[Any, ...], list[int]] = {}
    for i, key in enumerate(zip(*keys, strict=True)):
        out.setdefault(key, []).append(i)
    return out
