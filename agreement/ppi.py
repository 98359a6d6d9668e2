"""Prediction-powered estimates of a mean: a judge on every item, labels on a few.

A judge scores all N items (a pass 0/1, a composite, a dimension's score); people label a subset
of n. The judge alone is precise but biased by however wrong the judge is; the labels alone are
unbiased but few. Prediction-powered inference (Angelopoulos et al., Science 2023) with power
tuning (PPI++, Angelopoulos, Duchi and Zrnic 2023) combines them:

    θ̂ = λ · mean(judge over unlabelled items) + mean(label - λ · judge over labelled items)

which is unbiased for any λ however biased the judge is, and λ is chosen from the data to make
the variance small (λ = 0 is labels-only; λ = 1 is plain PPI). The labelled items must be a
simple random sample of the items (`ppi_mean`), or drawn with recorded, known probabilities
(`active_ppi_mean`, after Zrnic and Candès, "Active Statistical Inference", 2024, which weights
each label by the inverse of its probability).

Clustering. Trials of one incident are not independent, so every variance here is
cluster-robust: each estimator is a sum of per-item terms ψ_i (its linearisation), and its
variance is Σ over clusters c of (Σ_{i in c} ψ_i)², clusters being independent while items of
one cluster may be correlated in any way. No small-sample correction is applied (CR0): with
every item its own cluster the variances equal ppi_py's (`ppi_mean_ci`, `classical_mean_ci`)
exactly, and with few clusters (under ~30) the intervals run narrow. Labelled items are sampled
by item, so one incident's trials may fall on both sides; the variance accounts for that.

Intervals are normal (Wald) two-sided at level 1 - alpha; for a proportion they can reach past
[0, 1] and are not clipped (as in ppi_py). The per-item terms of each estimator are
`agreement.ppi_fits`; this module turns them into estimates, differences and labelling designs.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from agreement.arrays import (
    BoolArray,
    FloatArray,
    IntArray,
    as_floats,
    as_unit,
    check_level,
    cluster_codes,
    same_length,
)
from agreement.ppi_fits import (
    Fit,
    active_fit,
    check_inputs,
    check_probabilities,
    cluster_keys,
    difference,
    judge_fit,
    labels_fit,
    ppi_fit,
    z_value,
)

Method = Literal["judge only", "labels only", "PPI++", "active PPI++", "labels only (IPW)"]
Verdict = Literal["A better", "B better", "cannot tell apart"]
DEFAULT_ALPHA = 0.05
DEFAULT_FLOOR = 0.1


class MeanEstimate(BaseModel):
    """A mean (or a difference of two means), its standard error and its interval."""

    method: Method
    value: float | None = Field(description="None when there is nothing to estimate it from.")
    se: float | None = Field(description="Cluster-robust standard error; None with < 2 clusters.")
    ci_low: float | None = None
    ci_high: float | None = None
    lam: float | None = Field(None, description="PPI++ power-tuning λ (0 = labels only).")
    n_items: int
    n_labels: int
    n_clusters: int = Field(description="Clusters that contribute to the estimate.")
    note: str | None = Field(None, description="Why value, se or interval is missing.")

    def text(self, digits: int = 3) -> str:
        """`0.412 [0.350, 0.474]`, or `undefined` with the reason."""
        if self.value is None:
            return f"undefined ({self.note})"
        out = f"{self.value:.{digits}f}"
        if self.ci_low is not None and self.ci_high is not None:
            out += f" [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"
        return out


class PPIEstimate(BaseModel):
    """One mean three ways: from the judge alone, the labels alone, and both (PPI++)."""

    confidence: float = Field(description="The intervals' nominal coverage, 1 - alpha.")
    judge_only: MeanEstimate = Field(description="Mean of the judge over all items: biased.")
    labels_only: MeanEstimate
    ppi: MeanEstimate
    effective_labels: float | None = Field(
        description="n_labels x labels-only variance / PPI variance: how many labels the "
        "labels-only estimate would need to be as precise as PPI (its variance falls as 1/n)."
    )


class MeanDifference(BaseModel):
    """Mean of A minus mean of B three ways, and whether the data can tell them apart."""

    a: str
    b: str
    confidence: float
    judge_only: MeanEstimate
    labels_only: MeanEstimate
    ppi: MeanEstimate
    verdict: Verdict = Field(
        description="From the PPI interval: 'A better' when it lies above 0, 'B better' when "
        "below, 'cannot tell apart' when it contains 0 (or is undefined)."
    )
    summary: str = Field(description="The verdict with the names, e.g. 'gpt better: +0.120 [...]'.")


class LabelCandidate(BaseModel):
    """An unlabelled item, the judge's expected squared error on it, and what its label buys."""

    index: int
    expected_sq_error: float = Field(
        description="E[(label - λ·judge)²] with the label Yes with probability p_yes: the "
        "uncertainty a label on this item removes."
    )
    half_width_after: float = Field(
        description="Half-width of the interval on the mean expected once this item is labelled."
    )
    shrink: float = Field(description="Half-width now minus half_width_after.")


def ppi_mean(
    judge: npt.ArrayLike,
    labels: npt.ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> PPIEstimate:
    """Judge-only, labels-only and PPI++ estimates of a mean, with cluster-robust intervals.

    Args:
        judge: the judge's value for each of the N items (finite numbers).
        labels: the labelled value per item, NaN or None where unlabelled. The labelled items
            must be a simple random sample of the items (drawn by item, not by cluster).
        clusters: a cluster id per item (the incident); None: each item its own cluster.
        alpha: intervals have nominal coverage 1 - alpha.
        lam: the PPI++ weight on the judge; None tunes it: λ = C / ((1 + n / N_u) · V), clipped
            to [0, 1], where C is n times the cluster-robust covariance of the labelled means of
            label and judge, V the cluster-robust variance of the judge per item over all
            items (divisor N - 1), n the labelled and N_u the unlabelled count; with every item
            its own cluster this is ppi_py's `lam=None` choice. Any λ keeps the interval valid.

    Returns:
        The three estimates and the effective number of labels. PPI needs >= 2 labels; with
        every item labelled it is the labels-only estimate (λ = 0). A standard error needs
        >= 2 clusters among the items it is computed from.

    Raises:
        ValueError: lengths differ, a non-finite judge value, alpha outside (0, 1), lam
            outside [0, 1].
    """
    alpha = check_level(alpha, "alpha")
    f, y, codes = check_inputs(judge, labels, clusters)
    labelled = ~np.isnan(y)
    z = z_value(alpha)
    judge_only = _estimate("judge only", judge_fit(f, codes), f, labelled, codes, z)
    labels_only = _estimate("labels only", labels_fit(y, labelled, codes), f, labelled, codes, z)
    ppi = _estimate("PPI++", ppi_fit(f, y, labelled, codes, lam), f, labelled, codes, z)
    return PPIEstimate(
        confidence=1 - alpha,
        judge_only=judge_only,
        labels_only=labels_only,
        ppi=ppi,
        effective_labels=_effective(labels_only, ppi),
    )


def ppi_mean_difference(
    judge_a: npt.ArrayLike,
    labels_a: npt.ArrayLike,
    judge_b: npt.ArrayLike,
    labels_b: npt.ArrayLike,
    *,
    clusters_a: Sequence[Hashable] | None = None,
    clusters_b: Sequence[Hashable] | None = None,
    names: tuple[str, str] = ("A", "B"),
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> MeanDifference:
    """Mean of A minus mean of B (e.g. two agents' pass rates), three ways, and a verdict.

    Each side is estimated as `ppi_mean` does (its own λ when `lam` is None). Clusters with
    the same id on both sides (the same incident run by both agents) are one cluster: the
    variance of the difference sums A's terms minus B's within each cluster, so a hard
    incident that lowers both agents' scores does not widen the interval.

    Args:
        judge_a, labels_a, judge_b, labels_b: as `ppi_mean`, per agent.
        clusters_a, clusters_b: cluster ids per item of each agent; None: each item alone.
        names: the agents' names for the summary.
        alpha, lam: as `ppi_mean`.

    Returns:
        The difference three ways; the verdict comes from the PPI interval.

    Raises:
        ValueError: as `ppi_mean`.
    """
    alpha = check_level(alpha, "alpha")
    fa = as_floats(judge_a, "judge_a")
    fb = as_floats(judge_b, "judge_b")
    keys = cluster_keys(clusters_a, len(fa), "a") + cluster_keys(clusters_b, len(fb), "b")
    codes = cluster_codes(keys, len(keys))
    fa, ya, ca = check_inputs(fa, labels_a, None, "labels_a", codes[: len(fa)])
    fb, yb, cb = check_inputs(fb, labels_b, None, "labels_b", codes[len(fa) :])
    la, lb = ~np.isnan(ya), ~np.isnan(yb)
    f, labelled = np.concatenate([fa, fb]), np.concatenate([la, lb])
    z = z_value(alpha)
    fits: dict[Method, tuple[Fit | str, Fit | str]] = {
        "judge only": (judge_fit(fa, ca), judge_fit(fb, cb)),
        "labels only": (labels_fit(ya, la, ca), labels_fit(yb, lb, cb)),
        "PPI++": (ppi_fit(fa, ya, la, ca, lam), ppi_fit(fb, yb, lb, cb, lam)),
    }
    out: dict[Method, MeanEstimate] = {}
    for method, (one, two) in fits.items():
        diff = difference(one, two)
        out[method] = _estimate(method, diff, f, labelled, codes, z)
    verdict, summary = _verdict(out["PPI++"], names)
    return MeanDifference(
        a=names[0],
        b=names[1],
        confidence=1 - alpha,
        judge_only=out["judge only"],
        labels_only=out["labels only"],
        ppi=out["PPI++"],
        verdict=verdict,
        summary=summary,
    )


def binary_uncertainty(p_yes: npt.ArrayLike) -> FloatArray:
    """sqrt(p (1 - p)): the standard deviation of a Yes/No label the judge gives P(Yes) = p.

    Zrnic and Candès show that the variance of the active estimator is smallest when each
    item's labelling probability is proportional to the root of the expected squared error of
    the prediction; for a calibrated P(Yes) used as the prediction that is this.
    """
    p = as_unit(p_yes, "p_yes")
    return np.sqrt(p * (1 - p))


def labelling_probabilities(
    uncertainty: npt.ArrayLike, budget: float, *, floor: float = DEFAULT_FLOOR
) -> FloatArray:
    """Probabilities of labelling each item, proportional to the judge's uncertainty.

    π_i = min(1, c · max(u_i, floor · mean(u))), with c such that Σ π_i = budget (the expected
    number of labels). The floor keeps every probability > 0, so an item the judge is sure of
    can still be drawn and the inverse-probability-weighted estimate stays unbiased: no item is
    less than `floor` times as likely as an item of average uncertainty (or is certain).
    When every uncertainty is 0 the probabilities are uniform, budget / N.

    Args:
        uncertainty: per item, >= 0 (e.g. `binary_uncertainty` of the calibrated P(Yes), or a
            `LabelCandidate`'s shrink).
        budget: expected labels, in (0, N].
        floor: in (0, 1].

    Returns:
        π per item, each in (0, 1], summing to `budget` (to rounding).

    Raises:
        ValueError: a negative or non-finite uncertainty, budget or floor out of range.
    """
    u = as_floats(uncertainty, "uncertainty")
    if (u < 0).any():
        raise ValueError(f"uncertainty: expected numbers >= 0, got {float(u[u < 0][0])!r}")
    if not 0 < budget <= len(u):
        raise ValueError(f"budget: expected a number in (0, {len(u)}] (the items), got {budget!r}")
    if not 0 < floor <= 1:
        raise ValueError(f"floor: expected a number in (0, 1], got {floor!r}")
    if u.mean() == 0:
        return np.full(len(u), budget / len(u))
    w = np.maximum(u, floor * u.mean())
    capped = np.zeros(len(u), dtype=bool)
    while not capped.all():  # all capped (budget = N): every item is certain
        scale = (budget - capped.sum()) / w[~capped].sum()
        newly = ~capped & (scale * w >= 1)
        if not newly.any():
            return np.where(capped, 1.0, scale * w)
        capped |= newly
    return np.ones(len(u))


def sample_for_labelling(
    probabilities: npt.ArrayLike, seed: int | np.random.Generator | None = None
) -> BoolArray:
    """Draw each item independently with its probability (Poisson sampling): True = label it.

    Record the probabilities with the draw: `active_ppi_mean` needs them for every item.
    """
    pi = check_probabilities(probabilities)
    return np.random.default_rng(seed).random(len(pi)) < pi


def active_ppi_mean(
    judge: npt.ArrayLike,
    labels: npt.ArrayLike,
    probabilities: npt.ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> PPIEstimate:
    """PPI++ with labels drawn with known, unequal probabilities (active inference).

    Each item i was labelled independently with probability π_i (`sample_for_labelling`);
    ξ_i = 1 if it was. The estimate is the mean over all N items of

        z_i = λ · judge_i + ξ_i · (label_i - λ · judge_i) / π_i,

    unbiased for the mean of the labels for any fixed λ since E[ξ_i / π_i] = 1. Its variance
    is estimated cluster-robustly from the z_i; λ (None) minimises that estimate, clipped to
    [0, 1]. The labels-only estimate is the same with λ = 0 (Horvitz-Thompson); the judge-only
    one as in `ppi_mean`.

    Args:
        judge: the judge's value per item.
        labels: per item, NaN or None where not labelled.
        probabilities: per item (labelled or not), the probability it was drawn, in (0, 1].
        clusters, alpha: as `ppi_mean`.
        lam: fixed λ in [0, 1], or None to tune.

    Returns:
        The three estimates; labels-only and PPI need >= 2 labels.

    Raises:
        ValueError: lengths differ, a probability outside (0, 1], bad alpha or lam.
    """
    alpha = check_level(alpha, "alpha")
    f, y, codes = check_inputs(judge, labels, clusters)
    pi = check_probabilities(probabilities)
    same_length(len(f), probabilities=pi)
    labelled = ~np.isnan(y)
    z = z_value(alpha)
    labels_only = active_fit(f, y, labelled, pi, codes, 0.0)
    ppi = active_fit(f, y, labelled, pi, codes, lam)
    labels_est = _estimate("labels only (IPW)", labels_only, f, labelled, codes, z, all_items=True)
    ppi_est = _estimate("active PPI++", ppi, f, labelled, codes, z, all_items=True)
    return PPIEstimate(
        confidence=1 - alpha,
        judge_only=_estimate("judge only", judge_fit(f, codes), f, labelled, codes, z),
        labels_only=labels_est,
        ppi=ppi_est,
        effective_labels=_effective(labels_est, ppi_est),
    )


def active_ppi_mean_difference(
    judge_a: npt.ArrayLike,
    labels_a: npt.ArrayLike,
    probabilities_a: npt.ArrayLike,
    judge_b: npt.ArrayLike,
    labels_b: npt.ArrayLike,
    probabilities_b: npt.ArrayLike,
    *,
    clusters_a: Sequence[Hashable] | None = None,
    clusters_b: Sequence[Hashable] | None = None,
    names: tuple[str, str] = ("A", "B"),
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> MeanDifference:
    """`ppi_mean_difference` for labels drawn with known probabilities: each side estimated as
    `active_ppi_mean` does (its own λ when `lam` is None), each centred on its own mean, and
    clusters shared by both sides one cluster, so a hard incident that lowers both agents'
    scores does not widen the interval.

    Args:
        judge_a, labels_a, probabilities_a, judge_b, labels_b, probabilities_b: as
            `active_ppi_mean`, per agent.
        clusters_a, clusters_b, names, alpha, lam: as `ppi_mean_difference`.

    Raises:
        ValueError: as `active_ppi_mean`.
    """
    alpha = check_level(alpha, "alpha")
    fa = as_floats(judge_a, "judge_a")
    fb = as_floats(judge_b, "judge_b")
    keys = cluster_keys(clusters_a, len(fa), "a") + cluster_keys(clusters_b, len(fb), "b")
    codes = cluster_codes(keys, len(keys))
    fa, ya, ca = check_inputs(fa, labels_a, None, "labels_a", codes[: len(fa)])
    fb, yb, cb = check_inputs(fb, labels_b, None, "labels_b", codes[len(fa) :])
    pa, pb = check_probabilities(probabilities_a), check_probabilities(probabilities_b)
    same_length(len(fa), probabilities_a=pa)
    same_length(len(fb), probabilities_b=pb)
    la, lb = ~np.isnan(ya), ~np.isnan(yb)
    f, labelled = np.concatenate([fa, fb]), np.concatenate([la, lb])
    z = z_value(alpha)
    fits: dict[Method, tuple[Fit | str, Fit | str]] = {
        "judge only": (judge_fit(fa, ca), judge_fit(fb, cb)),
        "labels only (IPW)": (
            active_fit(fa, ya, la, pa, ca, 0.0),
            active_fit(fb, yb, lb, pb, cb, 0.0),
        ),
        "active PPI++": (
            active_fit(fa, ya, la, pa, ca, lam),
            active_fit(fb, yb, lb, pb, cb, lam),
        ),
    }
    out = {
        method: _estimate(
            method, difference(*pair), f, labelled, codes, z, all_items=method != "judge only"
        )
        for method, pair in fits.items()
    }
    verdict, summary = _verdict(out["active PPI++"], names)
    return MeanDifference(
        a=names[0],
        b=names[1],
        confidence=1 - alpha,
        judge_only=out["judge only"],
        labels_only=out["labels only (IPW)"],
        ppi=out["active PPI++"],
        verdict=verdict,
        summary=summary,
    )


def rank_for_labelling(
    judge: npt.ArrayLike,
    labels: npt.ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    p_yes: npt.ArrayLike | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> list[LabelCandidate]:
    """Unlabelled items ranked by how much a label on each would narrow the interval.

    The score is model-based: given the judge's outputs, the mean of the labels over all N items
    is uncertain by the labels not yet seen, each with expected squared error
    σ_j² = E[(Y_j - λ·judge_j)²] = p_j (1 - λ·judge_j)² + (1 - p_j) (λ·judge_j)² (Y_j Yes with
    probability p_j; a label in [0, 1] that is not Yes/No is treated as Yes/No with that mean,
    its widest spread), and by the estimate of the judge's bias from the n labels so far:

        V = Σ_{unlabelled} σ_i² / N²  +  (N_u / N)² · s² / n,

    s² the variance of label - λ·judge over the labelled items (with fewer than 2 labels, the
    mean σ² over all items), λ the current PPI++ one (1 with fewer than 2 labels). Labelling j
    removes σ_j² / N² from the first term and makes the second (N_u - 1)² / N² · s² / (n + 1).
    Half-widths are z · sqrt(V). Clustering is ignored in this score (it enters the intervals
    of `ppi_mean` and `active_ppi_mean`, not the ranking); so is what a label would reveal
    about other items of its incident.

    This is a score, not a sampling design: labelling the top of the list makes which items
    are labelled depend on the judge, and `ppi_mean` then no longer applies. To keep the
    estimate unbiased, draw with probabilities proportional to sqrt(expected_sq_error)
    (`labelling_probabilities`, the optimum of Zrnic and Candès) and estimate with
    `active_ppi_mean`.

    Args:
        judge, labels, clusters, alpha: as `ppi_mean` (clusters only set λ).
        p_yes: per item, the probability its label is Yes; default the judge value clipped to
            [0, 1] (right for a calibrated judge's P(Yes) or a pass/fail judge's 0/1).

    Returns:
        One candidate per unlabelled item, largest shrink first (ties by index).

    Raises:
        ValueError: as `ppi_mean`, or p_yes outside [0, 1].
    """
    alpha = check_level(alpha, "alpha")
    f, y, codes = check_inputs(judge, labels, clusters)
    p = np.clip(f, 0, 1) if p_yes is None else as_unit(p_yes, "p_yes")
    same_length(len(f), p_yes=p)
    labelled = ~np.isnan(y)
    if labelled.all():
        return []
    fit = ppi_fit(f, y, labelled, codes, None)
    lam = 1.0 if isinstance(fit, str) or fit.lam is None else fit.lam
    sigma2 = p * (1 - lam * f) ** 2 + (1 - p) * (lam * f) ** 2
    n, n_total = int(labelled.sum()), len(f)
    n_u = n_total - n
    residuals = y[labelled] - lam * f[labelled]
    s2 = float(residuals.var()) if n >= 2 else float(sigma2.mean())
    unseen = float(sigma2[~labelled].sum())
    now = unseen / n_total**2 + (n_u / n_total) ** 2 * s2 / max(n, 1)
    after = (unseen - sigma2) / n_total**2 + ((n_u - 1) / n_total) ** 2 * s2 / (n + 1)
    z = z_value(alpha)
    width_now = z * np.sqrt(now)
    widths = z * np.sqrt(np.maximum(after, 0.0))
    out = [
        LabelCandidate(
            index=int(j),
            expected_sq_error=float(sigma2[j]),
            half_width_after=float(widths[j]),
            shrink=float(width_now - widths[j]),
        )
        for j in np.flatnonzero(~labelled)
    ]
    return sorted(out, key=lambda c: (-c.shrink, c.index))


def _estimate(
    method: Method,
    fit: Fit | str,
    f: FloatArray,
    labelled: BoolArray,
    codes: IntArray,
    z: float,
    *,
    all_items: bool = False,
) -> MeanEstimate:
    uses_all = all_items or method == "judge only"
    clusters = len(np.unique(codes if uses_all else codes[labelled]))
    out = MeanEstimate(
        method=method,
        value=None,
        se=None,
        n_items=len(f),
        n_labels=int(labelled.sum()),
        n_clusters=clusters,
    )
    if isinstance(fit, str):
        out.note = fit
        return out
    out.value, out.lam = fit.value, fit.lam
    if clusters < 2:
        out.note = f"a standard error needs at least 2 clusters, got {clusters}"
        return out
    out.se = float(np.sqrt(fit.variance()))
    out.ci_low, out.ci_high = fit.value - z * out.se, fit.value + z * out.se
    return out


def _effective(labels_only: MeanEstimate, ppi: MeanEstimate) -> float | None:
    if labels_only.se is None or ppi.se is None or ppi.se == 0:
        return None
    return labels_only.n_labels * labels_only.se**2 / ppi.se**2


def _verdict(estimate: MeanEstimate, names: tuple[str, str]) -> tuple[Verdict, str]:
    if estimate.ci_low is not None and estimate.ci_low > 0:
        return "A better", f"{names[0]} better: {estimate.text()}"
    if estimate.ci_high is not None and estimate.ci_high < 0:
        return "B better", f"{names[1]} better: {estimate.text()}"
    return "cannot tell apart", f"cannot tell {names[0]} and {names[1]} apart: {estimate.text()}"
