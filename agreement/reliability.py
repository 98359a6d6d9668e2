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

Which of those kinds of maps to fit (`MapKind`: one per judge, per question, per question and
answer) is chosen on the labelled answers themselves by `choose_map_kind`: finer maps follow
the data more closely and can rank answers better, or only fit noise; the kind whose maps,
fitted on some incidents, rank the others' answers best (cross-validated AUROC) is kept.

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
from agreement.ranking import auroc

DEFAULT_MIN_COUNT = 30
DEFAULT_BINS = 10
DEFAULT_FOLDS = 5
FINER_BY = 0.01
"""How much higher a finer kind of map's cross-validated AUROC must be for it to be chosen."""

Level = Literal["question-answer", "answer", "question", "judge", "pooled"]
MapKind = Literal["judge", "question", "question-answer"]
MAP_KINDS: tuple[MapKind, ...] = ("judge", "question", "question-answer")
"""Coarsest first: one map per judge; per (judge, question); per (judge, question, answer)."""


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


class MapChoice(BaseModel):
    """Which kind of maps was fitted, and each kind's AUROC on held-out incidents."""

    kind: MapKind
    auroc: dict[str, float | None] = Field(
        description="Per kind: the AUROC of its maps' predictions for answers of incidents "
        "they were not fitted on (folds of incidents, predictions pooled); None: undefined."
    )
    folds: int = Field(description="Folds of incidents (0: too few to cross-validate).")
    reason: str


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
    choice: MapChoice | None = Field(
        None, description="How the kind of maps was chosen; None: not chosen (made before)."
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
    kind: MapKind | None = None,
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
        kind: the finest maps to fit (`MapKind`); default per question and answer when the
            answers are given, else per question.

    Returns:
        The maps; every judge and question, even one never seen, gets a map from `map_for`.

    Raises:
        ValueError: no answers, bad values, lengths that differ, min_count < 1, or kind
            per question and answer without the answers.
    """
    if min_count < 1:
        raise ValueError(f"min_count: expected at least 1, got {min_count}")
    kind = kind or ("question" if answers is None else "question-answer")
    if kind == "question-answer" and answers is None:
        raise ValueError("kind: maps per question and answer need the answers' values")
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
        if len(index) >= min_count and kind != "judge"
    ]
    per_answer: list[AnswerMap] = []
    if answers is not None and kind == "question-answer":
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


def choose_map_kind(
    confidence: npt.ArrayLike,
    agreed: npt.ArrayLike,
    judges: Sequence[str],
    questions: Sequence[str],
    answers: Sequence[str],
    clusters: Sequence[str],
    *,
    min_count: int = DEFAULT_MIN_COUNT,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> MapChoice:
    """The kind of maps whose predictions rank held-out answers best.

    The clusters (incidents) are dealt into `folds` folds at random (seeded); each kind's maps
    are fitted on all folds but one and predict the answers of that one; the kind with the
    highest AUROC over all the held-out predictions is chosen, a finer kind only when it beats
    a coarser one by more than `FINER_BY` (finer maps cost labels and follow noise). With
    fewer than two incidents, or no answer that disagrees (or none that agrees), the AUROC
    says nothing and the coarsest kind is kept.
    """
    x = as_unit(confidence, "confidence")
    y = as_bools(agreed, "agreed", len(x))
    same_length(len(x), clusters=np.asarray(clusters), answers=np.asarray(answers))
    names = sorted(set(clusters))
    k = min(folds, len(names))
    if k < 2 or y.all() or not y.any():
        why = "fewer than two incidents" if k < 2 else "every answer agrees, or none does"
        return MapChoice(
            kind="judge",
            auroc=dict.fromkeys(MAP_KINDS),
            folds=0,
            reason=f"one map per judge: {why}, so nothing tells the kinds apart",
        )
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {names[i]: n % k for n, i in enumerate(order)}
    fold = np.array([fold_of[c] for c in clusters])
    keys = np.array([judges, questions, answers], dtype=object)
    scores: dict[str, float | None] = {}
    for kind in MAP_KINDS:
        held = np.empty(len(x))
        for f in range(k):
            train, test = fold != f, fold == f
            j, q, a = (list(row) for row in keys[:, train])
            maps = fit_confidence_calibration(
                x[train], y[train], j, q, answers=a, min_count=min_count, kind=kind
            )
            held[test] = maps.predict(x[test], *(list(row) for row in keys[:, test]))
        scores[kind] = auroc(held, y)
    chosen: MapKind = "judge"
    for kind in MAP_KINDS[1:]:
        if (scores[kind] or 0.0) > (scores[chosen] or 0.0) + FINER_BY:
            chosen = kind
    shown = ", ".join(f"{kind} {_fmt(v)}" for kind, v in scores.items())
    return MapChoice(
        kind=chosen,
        auroc=dict(scores),
        folds=k,
        reason=f"highest AUROC on held-out incidents ({k} folds: {shown}); a finer kind only "
        f"when more than {FINER_BY:g} higher",
    )


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


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
