"""Selective and cascaded judging with a guarantee of agreement with the labels.

After Jung, Brahman and Choi, "Trust or Escalate: LLM Judges with Provable Guarantees for Human
Agreement" (ICLR 2025). A judge answers only when its confidence is at least a threshold λ and
abstains (or escalates) otherwise. `select_threshold` picks λ̂ from labelled calibration data so
that, for new answers drawn like the calibration ones,

    P(agree with the label | confidence >= λ̂) >= target     with probability >= 1 - alpha

over the draw of the calibration data. It tests the null "agreement above λ is under the target"
at each distinct calibration confidence, from the most confident downward (fixed-sequence
testing, so no multiplicity correction is needed), rejecting when the exact one-sided
Clopper-Pearson lower bound at level alpha on the agreement above λ is at least the target, and
stops at the first threshold it cannot reject; λ̂ is the last rejected one. Thresholds with
fewer calibration answers above them than a perfect record would need to clear the bound
(`min_count`) are not tested: they could never be rejected, and which ones they are depends on
the confidences alone, not on the labels, so skipping them keeps the guarantee.

A cascade (`calibrate_cascade`, `route_cascade`) asks its judges in order; a judge answers when
its confidence is at least its own threshold, else the item goes to the next judge, and after
the last one it is left unanswered. As in the paper's cascaded selective evaluation, each stage's
threshold is selected on the calibration items that reach it (those no earlier stage answered).
The answered items' agreement is a mix of the stages' agreements, so it is at least the target
whenever every stage's is; by a union bound that holds with probability >= 1 - alpha when each
stage is tested at alpha / (number of stages) (`split_alpha=True`, the default). The paper's code
tests every stage at alpha (`split_alpha=False`), which guarantees each stage at 1 - alpha but
the whole cascade only at 1 - stages * alpha.

The confidence can be raw or calibrated: the test depends only on its order (a calibrated map
that merges raw values into one step merges their thresholds too).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from typing import Annotated, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from agreement.arrays import FloatArray, as_bools, as_floats, check_level
from agreement.ranking import DEFAULT_B, Ranking, rank_confidence

MAX_LABELS = 2**40


class SelectiveGuarantee(BaseModel):
    """A threshold that carries the guarantee: answer when confidence >= `threshold`."""

    status: Literal["guaranteed"] = "guaranteed"
    target: float
    alpha: float
    threshold: float
    lower_bound: float = Field(
        description="One-sided (1 - alpha) Clopper-Pearson lower bound on the agreement of "
        "calibration answers with confidence >= threshold; at least `target`."
    )
    agreement: float = Field(description="Observed agreement of those calibration answers.")
    coverage: float = Field(description="Share of calibration answers at or above threshold.")
    n: int = Field(description="Calibration answers.")
    n_answered: int = Field(description="Calibration answers at or above threshold.")
    n_tested: int = Field(description="Thresholds tested in the fixed sequence.")


class SelectiveRefusal(BaseModel):
    """The labels cannot support the target: no threshold is guaranteed; nothing is answered.

    `labels_needed` estimates how many calibration labels would support it: at the threshold
    where the fewest would do, the smallest number at which the agreement and coverage observed
    above it, if they held, would clear the bound (ignoring the higher thresholds the fixed
    sequence tests first). None when no threshold's observed agreement exceeds the target: then
    more labels of the same kind cannot help.
    """

    status: Literal["refused"] = "refused"
    target: float
    alpha: float
    n: int = Field(description="Calibration answers.")
    reason: str
    cause: Literal["bound", "ranking"] = Field(
        "bound",
        description="bound: no threshold's agreement clears the bound; ranking: one did, but "
        "it leaves answers out on a confidence that does not rank them better than chance.",
    )
    best_threshold: float | None = None
    best_agreement: float | None = Field(None, description="Observed above best_threshold.")
    best_coverage: float | None = None
    labels_needed_above: int | None = Field(
        None, description="Answers at or above best_threshold at which the bound would clear."
    )
    labels_needed: int | None = Field(
        None, description="Calibration labels in all: labels_needed_above / best_coverage."
    )
    more_labels_needed: int | None = Field(None, description="labels_needed - n (at least 0).")


SelectiveResult = Annotated[SelectiveGuarantee | SelectiveRefusal, Field(discriminator="status")]


def clopper_pearson_lower(k: npt.ArrayLike, n: npt.ArrayLike, alpha: float) -> FloatArray:
    """Exact one-sided (1 - alpha) lower confidence bound on a binomial proportion.

    The alpha quantile of Beta(k, n - k + 1), and 0 where k = 0. `k` may be non-integer (the
    Beta quantile is continuous in it); n >= 1 and 0 <= k <= n are required.
    """
    from scipy.special import betaincinv  # imported late: scipy costs a second

    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    bound = betaincinv(np.where(k_arr > 0, k_arr, 1.0), n_arr - k_arr + 1.0, alpha)
    return np.asarray(np.where(k_arr > 0, bound, 0.0), dtype=float)


@functools.cache
def min_count_for(target: float, alpha: float) -> int:
    """The fewest answers at which a perfect record (all agreed) clears the bound.

    With k = n the lower bound is alpha ** (1 / n), at least `target` iff n >= ln alpha / ln t.
    """
    check_level(target, "target")
    check_level(alpha, "alpha")
    n = max(1, math.ceil(math.log(alpha) / math.log(target) - 1e-12))
    while clopper_pearson_lower(n, n, alpha) < target:
        n += 1
    return n


def labels_needed(agreement: float, target: float, alpha: float) -> int | None:
    """The smallest number of answers m at which an observed agreement rate would clear the bound.

    The bound is evaluated at k = agreement * m successes (continuous), so the answer is the m
    at which that rate, if it held, would give a lower bound >= target. None when
    agreement <= target (no m suffices) or more than 2**40 would be needed.
    """
    check_level(target, "target")
    check_level(alpha, "alpha")
    if not agreement > target:
        return None
    found = _needed(np.array([agreement]), target, alpha)[0]
    return None if found < 0 else int(found)


def select_threshold(
    confidence: npt.ArrayLike,
    agreed: npt.ArrayLike,
    target: float,
    alpha: float = 0.1,
    *,
    min_count: int | None = None,
) -> SelectiveGuarantee | SelectiveRefusal:
    """Choose the confidence threshold that guarantees agreement >= target at level alpha.

    Args:
        confidence: the judge's confidence for each labelled calibration answer (any real
            numbers; only their order matters).
        agreed: whether each answer agreed with the label (bool or 0/1), same length.
        target: the agreement to guarantee, in (0, 1).
        alpha: the error level, in (0, 1): the guarantee holds with probability >= 1 - alpha.
        min_count: only thresholds with at least this many calibration answers at or above
            them are tested; default `min_count_for(target, alpha)`, the fewest at which a
            perfect record clears the bound (a data-independent choice: any fixed number keeps
            the guarantee).

    Returns:
        `SelectiveGuarantee` with the lowest threshold reached by the fixed sequence, or
        `SelectiveRefusal` when the first threshold tested already fails (or there are too few
        answers to test any), saying how many labels would be needed. Never raises for data
        that merely cannot support the target.

    Raises:
        ValueError: bad values, lengths that differ, target or alpha outside (0, 1).
    """
    target = check_level(target, "target")
    alpha = check_level(alpha, "alpha")
    x = as_floats(confidence, "confidence")
    y = as_bools(agreed, "agreed", len(x))
    floor = min_count_for(target, alpha) if min_count is None else max(1, min_count)
    thresholds, n_above, k_above = _steps(x, y)
    tested = n_above >= floor
    bounds = clopper_pearson_lower(k_above[tested], n_above[tested], alpha)
    passed = bounds >= target
    n_pass = len(passed) if passed.all() else int(np.argmin(passed))
    if n_pass == 0:
        return _refusal(thresholds, n_above, k_above, len(x), target, alpha, floor)
    index = np.flatnonzero(tested)[n_pass - 1]
    return SelectiveGuarantee(
        target=target,
        alpha=alpha,
        threshold=float(thresholds[index]),
        lower_bound=float(bounds[n_pass - 1]),
        agreement=float(k_above[index] / n_above[index]),
        coverage=float(n_above[index] / len(x)),
        n=len(x),
        n_answered=int(n_above[index]),
        n_tested=min(n_pass + 1, int(tested.sum())),
    )


class CascadeStage(BaseModel):
    """One judge of a cascade: its selection on the calibration items that reached it."""

    name: str
    n_reaching: int = Field(description="Calibration items no earlier stage answered.")
    selection: SelectiveResult
    ranking: Ranking | None = Field(
        None,
        description="How its confidence ranks its answers on the items that reached it (when "
        "the cascade was calibrated with clusters).",
    )
    selects: bool | None = Field(
        None,
        description="Its threshold leaves some of its answers out: a selection that needs a "
        "confidence that ranks. False: it keeps every answer it gives, and the guarantee is "
        "its agreement on the calibration items, not a selection.",
    )

    @property
    def threshold(self) -> float | None:
        """The stage answers at or above this confidence; None: it never answers (refused)."""
        return self.selection.threshold if self.selection.status == "guaranteed" else None


class CascadePlan(BaseModel):
    """Thresholds for a cascade of judges, cheapest first, and what they give on calibration."""

    target: float
    alpha: float
    stage_alpha: float = Field(description="The level each stage was tested at.")
    stages: list[CascadeStage]
    coverage: float = Field(description="Share of calibration items some stage answers.")

    @property
    def thresholds(self) -> list[float | None]:
        return [stage.threshold for stage in self.stages]


def calibrate_cascade(
    confidences: Sequence[npt.ArrayLike],
    agreed: Sequence[npt.ArrayLike],
    target: float,
    alpha: float = 0.1,
    *,
    names: Sequence[str] | None = None,
    split_alpha: bool = True,
    min_count: int | None = None,
    clusters: Sequence[Hashable] | None = None,
    answered: Sequence[npt.ArrayLike] | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
) -> CascadePlan:
    """Choose each stage's threshold of a cascade, in order, on the items that reach it.

    Args:
        confidences: per stage (cheapest first), the judge's confidence on every calibration
            item; all stages judge the same items in the same order.
        agreed: per stage, whether that judge's answer on each item agreed with the label.
        target, alpha: as `select_threshold`; the guarantee is about all answered items.
        names: a name per stage (default "stage 1", "stage 2", ...).
        split_alpha: test each of the k stages at alpha / k (the union bound: the cascade as a
            whole keeps 1 - alpha); False tests each at alpha as the paper's code does.
        min_count: as `select_threshold`.
        clusters: each item's cluster (incident). When given, a stage's confidence must rank
            its answers better than chance on the items that reach it (`rank_confidence` at
            the stage's level, B resamples from `seed`) for a threshold that leaves some of
            them out: otherwise the stage is refused, since abstaining would drop right and
            wrong answers alike. A threshold that keeps every answer stays (it selects nothing).
        answered: per stage, whether the judge gave an answer on each item (default: all);
            items it could not answer are left out of its ranking.

    Returns:
        The plan. A stage whose selection is refused never answers; its items pass on.

    Raises:
        ValueError: no stages, stages of different lengths, bad values.
    """
    if len(confidences) == 0 or len(confidences) != len(agreed):
        raise ValueError(
            f"confidences, agreed: expected one array per stage and at least one stage, "
            f"got {len(confidences)} and {len(agreed)}"
        )
    k = len(confidences)
    labels = list(names) if names is not None else [f"stage {j + 1}" for j in range(k)]
    if len(labels) != k:
        raise ValueError(f"names: expected {k} names (one per stage), got {len(labels)}")
    xs = [as_floats(c, f"confidences[{j}]") for j, c in enumerate(confidences)]
    ys = [as_bools(a, f"agreed[{j}]", len(xs[j])) for j, a in enumerate(agreed)]
    if len({len(x) for x in xs}) != 1:
        raise ValueError("confidences: every stage must judge the same calibration items")
    stage_alpha = check_level(alpha, "alpha") / (k if split_alpha else 1)
    gives = [np.ones(len(x), dtype=bool) for x in xs]
    if answered is not None:
        if len(answered) != k:
            raise ValueError(f"answered: expected {k} arrays (one per stage), got {len(answered)}")
        gives = [
            as_bools(a, f"answered[{j}]", len(x))
            for j, (x, a) in enumerate(zip(xs, answered, strict=True))
        ]
    remaining = np.ones(len(xs[0]), dtype=bool)
    stages = []
    for name, x, y, given in zip(labels, xs, ys, gives, strict=True):
        result = select_threshold(
            x[remaining], y[remaining], target, stage_alpha, min_count=min_count
        )
        stage = CascadeStage(name=name, n_reaching=int(remaining.sum()), selection=result)
        if clusters is not None:
            stage = _ranked(stage, x, y, remaining & given, clusters, stage_alpha, B, seed)
        stages.append(stage)
        if isinstance(stage.selection, SelectiveGuarantee):
            remaining &= ~(x >= stage.selection.threshold)
    n = len(xs[0])
    return CascadePlan(
        target=target,
        alpha=alpha,
        stage_alpha=stage_alpha,
        stages=stages,
        coverage=float(1 - remaining.sum() / n) if n else 0.0,
    )


def _ranked(
    stage: CascadeStage,
    x: FloatArray,
    y: npt.NDArray[np.bool_],
    mask: npt.NDArray[np.bool_],
    clusters: Sequence[Hashable],
    alpha: float,
    B: int,
    seed: int,
) -> CascadeStage:
    """`stage` with its ranking on the answers it gives among the items that reach it, and
    refused when its threshold selects among them on a confidence that does not rank."""
    if len(clusters) != len(x):
        raise ValueError(f"clusters: expected {len(x)} entries (one per item), got {len(clusters)}")
    kept = [c for c, m in zip(clusters, mask, strict=True) if m]
    ranking = rank_confidence(x[mask], y[mask], kept, alpha=alpha, B=B, seed=seed)
    selection = stage.selection
    if not isinstance(selection, SelectiveGuarantee):
        return stage.model_copy(update={"ranking": ranking})
    selects = bool((x[mask] < selection.threshold).any())
    if selects and not ranking.ranks:
        selection = SelectiveRefusal(
            target=selection.target,
            alpha=selection.alpha,
            n=selection.n,
            reason=f"its threshold {selection.threshold:.4g} would keep {selection.n_answered} "
            f"of {selection.n} items on a confidence that does not rank its answers "
            f"({ranking.reason}); abstaining would drop right and wrong answers alike",
            cause="ranking",
        )
    return stage.model_copy(update={"ranking": ranking, "selects": selects, "selection": selection})


class CascadeRouting(BaseModel):
    """Where a cascade sends each item, and what that gives."""

    n: int
    stage: list[int | None] = Field(
        description="Per item, the answering stage's index; None: none."
    )
    coverage: float = Field(description="Share of items some stage answered.")
    answered_per_stage: list[int]
    share_per_stage: list[float] = Field(description="Share of all items answered at each stage.")
    asked_per_stage: list[int] = Field(description="Items that reached each stage (its calls).")
    agreement: float | None = Field(
        None, description="Agreement on the answered items (needs `agreed`; None if none)."
    )


def route_cascade(
    plan: CascadePlan | Sequence[float | None],
    confidences: Sequence[npt.ArrayLike],
    agreed: Sequence[npt.ArrayLike] | None = None,
) -> CascadeRouting:
    """Route items through a cascade: each stage answers when its confidence >= its threshold.

    Args:
        plan: a `CascadePlan`, or the thresholds per stage (None: the stage never answers).
        confidences: per stage, the judge's confidence on every item. Only the confidences of
            items that reach a stage are read; the others may be NaN (never asked).
        agreed: optional, per stage, whether that judge's answer agreed with the label; only
            entries of the answering stage are read.

    Returns:
        Per item its stage, the coverage, per stage the items asked and answered, and the
        agreement on what was answered when `agreed` is given.

    Raises:
        ValueError: the number of stages differs from the plan's, lengths differ, or an item
            that reaches a stage has no confidence there.
    """
    thresholds = plan.thresholds if isinstance(plan, CascadePlan) else list(plan)
    if len(confidences) != len(thresholds):
        raise ValueError(
            f"confidences: expected {len(thresholds)} stages (the plan's), got {len(confidences)}"
        )
    xs = [as_floats(c, f"confidences[{j}]", allow_nan=True) for j, c in enumerate(confidences)]
    n = len(xs[0]) if xs else 0
    if any(len(x) != n for x in xs):
        raise ValueError("confidences: every stage must list the same items")
    stage = np.full(n, -1)
    asked = []
    for j, (x, threshold) in enumerate(zip(xs, thresholds, strict=True)):
        reaching = stage < 0
        asked.append(int(reaching.sum()))
        if np.isnan(x[reaching]).any():
            raise ValueError(f"confidences[{j}]: an item that reaches this stage has no confidence")
        if threshold is not None:
            stage[reaching & (x >= threshold)] = j
    answered = [int((stage == j).sum()) for j in range(len(thresholds))]
    agreement = None
    if agreed is not None:
        ys = [as_bools(a, f"agreed[{j}]", n) for j, a in enumerate(agreed)]
        hits = sum(int(ys[j][stage == j].sum()) for j in range(len(thresholds)))
        agreement = hits / sum(answered) if sum(answered) else None
    return CascadeRouting(
        n=n,
        stage=[None if s < 0 else int(s) for s in stage],
        coverage=sum(answered) / n if n else 0.0,
        answered_per_stage=answered,
        share_per_stage=[a / n if n else 0.0 for a in answered],
        asked_per_stage=asked,
        agreement=agreement,
    )


def _steps(x: FloatArray, y: npt.NDArray[np.bool_]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Distinct confidences, highest first, with the answers and agreements at or above each."""
    order = np.argsort(-x, kind="stable")
    xs, ys = x[order], y[order].astype(float)
    if len(xs) == 0:
        return xs, xs, xs
    last = np.flatnonzero(np.append(xs[1:] != xs[:-1], True))
    return xs[last], (last + 1).astype(float), np.cumsum(ys)[last]


def _refusal(
    thresholds: FloatArray,
    n_above: FloatArray,
    k_above: FloatArray,
    n: int,
    target: float,
    alpha: float,
    floor: int,
) -> SelectiveRefusal:
    if n_above.size == 0 or n_above[-1] < floor:
        reason = (
            f"{n} calibration answers; a bound of {target} at alpha {alpha} needs at least "
            f"{floor} answers above a threshold, all agreeing"
        )
    else:
        first = int(np.argmax(n_above >= floor))
        reason = (
            f"the agreement above the first threshold tested ({thresholds[first]:.4g}, "
            f"{int(n_above[first])} answers, {k_above[first] / n_above[first]:.3f} agreed) "
            f"does not clear a lower bound of {target} at alpha {alpha}"
        )
    rates = k_above / np.maximum(n_above, 1)
    # A threshold with a lower rate than one below it (more answers) can never need fewer labels.
    better_below = np.append(np.maximum.accumulate(rates[::-1])[::-1][1:], -np.inf)
    hopeful = np.flatnonzero((rates > target) & (rates > better_below))
    if hopeful.size == 0:
        return SelectiveRefusal(
            target=target,
            alpha=alpha,
            n=n,
            reason=reason + "; no threshold's observed agreement exceeds the target, so more "
            "labels of the same kind would not help",
        )
    above = _needed(rates[hopeful], target, alpha).astype(float)
    total = np.where(above > 0, np.ceil(above * n / n_above[hopeful]), np.inf)
    best = int(np.argmin(total))
    if not np.isfinite(total[best]):
        return SelectiveRefusal(target=target, alpha=alpha, n=n, reason=reason)
    index = hopeful[best]
    return SelectiveRefusal(
        target=target,
        alpha=alpha,
        n=n,
        reason=reason,
        best_threshold=float(thresholds[index]),
        best_agreement=float(rates[index]),
        best_coverage=float(n_above[index] / n),
        labels_needed_above=int(above[best]),
        labels_needed=int(total[best]),
        more_labels_needed=max(0, int(total[best]) - n),
    )


def _needed(rates: FloatArray, target: float, alpha: float) -> npt.NDArray[np.int64]:
    """Per rate (> target), the smallest m with clopper_pearson_lower(rate*m, m) >= target.

    The bound rises with m at a fixed rate, so a doubling then a bisection over integers finds
    it for every rate at once; -1 where more than MAX_LABELS would be needed.
    """

    def clears(m: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        return clopper_pearson_lower(rates * m, m, alpha) >= target

    hi = np.ones(len(rates), dtype=np.int64)
    while not (done := clears(hi)).all() and hi.max() < MAX_LABELS:
        hi = np.where(done, hi, hi * 2)
    lo = np.where(hi > 1, hi // 2, 0)
    while (hi - lo > 1).any():
        mid = (lo + hi) // 2
        ok = clears(np.maximum(mid, 1))
        busy = hi - lo > 1
        hi = np.where(busy & ok, mid, hi)
        lo = np.where(busy & ~ok, mid, lo)
    return np.where(clears(hi), hi, -1)
