"""Stratified prediction-powered estimates of a finite population's mean.

When a judge is more accurate on some strata (a benchmark, an agent, a family of incidents)
than on others, and the labels are spread over the strata unevenly, one PPI++ correction
fitted on all labels at once lets the strata's errors blur into each other. Stratified PPI
(Fisch et al., "Stratified Prediction-Powered Inference for Hybrid Language Model
Evaluation", NeurIPS 2024) corrects within each stratum k and weights the strata by their
share of the items, w_k = N_k / N:

    θ̂ = Σ_k w_k θ̂_k,    θ̂_k = λ_k · mean over the N_k items (judge)
                              + mean over the n_k labelled items (label - λ_k · judge)

with each stratum's own λ_k (the regression of label on judge among its labelled items,
clipped to [0, 1]; λ = 0 is labels only). The labels must be a simple random sample within
each stratum; the strata may be sampled at different rates.

The estimand is the mean over these N items themselves (a finite population: this run's
cases). The judge's mean over a stratum is then known exactly, and the only randomness is
which items got labels: the variance of θ̂_k is (1 - n_k / N_k) S²_k / n_k, S²_k the spread of
label - λ_k · judge among the stratum's labelled items. The factor (1 - n_k / N_k), the
finite-population correction, matters once the labels are a sizeable share of a stratum; a
stratum labelled in full contributes no variance. Items of one cluster (incident) may fall in
several strata and are not independent: the variance is cluster-robust over every stratum at
once (each item's term, scaled by its stratum's weight and correction, summed within
clusters, as `agreement.ppi` does).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from agreement.arrays import BoolArray, FloatArray, IntArray, check_level
from agreement.ppi import DEFAULT_ALPHA, MeanEstimate
from agreement.ppi_fits import Fit, check_inputs, z_value


class StratumEstimate(BaseModel):
    """One stratum: its share of the items and its mean three ways."""

    stratum: str
    share: float = Field(description="N_k / N: its weight in the overall mean.")
    n_items: int
    n_labels: int
    judge_only: MeanEstimate
    labels_only: MeanEstimate
    ppi: MeanEstimate


class StratifiedEstimate(BaseModel):
    """A finite population's mean three ways, the labels-only and PPI++ ones stratified."""

    confidence: float
    finite_population: bool = Field(
        description="The variance carries each stratum's finite-population correction."
    )
    judge_only: MeanEstimate
    labels_only: MeanEstimate
    ppi: MeanEstimate
    strata: list[StratumEstimate]
    effective_labels: float | None = Field(
        description="How many labels the stratified labels-only estimate would need to be as "
        "precise as stratified PPI++."
    )


def stratified_ppi_mean(
    judge: npt.ArrayLike,
    labels: npt.ArrayLike,
    strata: Sequence[Hashable],
    clusters: Sequence[Hashable] | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    finite_population: bool = True,
) -> StratifiedEstimate:
    """Judge-only, stratified labels-only and stratified PPI++ estimates of the items' mean.

    Args:
        judge: the judge's value for each of the N items.
        labels: the label per item, NaN or None where unlabelled (a simple random sample
            within each stratum).
        strata: each item's stratum.
        clusters: each item's cluster (incident); None: each item its own.
        alpha: intervals have nominal coverage 1 - alpha (normal, two-sided).
        finite_population: apply the correction (1 - n_k / N_k); False treats each stratum's
            labelled items as drawn from an unbounded population.

    Returns:
        The three overall estimates and each stratum's. The stratified ones are undefined
        when some stratum has no label, or only one while it has more items (no spread to
        measure), naming the strata.

    Raises:
        ValueError: lengths differ, a non-finite judge value, alpha outside (0, 1).
    """
    alpha = check_level(alpha, "alpha")
    f, y, codes = check_inputs(judge, labels, clusters)
    keys = list(strata)
    if len(keys) != len(f):
        raise ValueError(f"strata: expected {len(f)} entries (one per item), got {len(keys)}")
    labelled = ~np.isnan(y)
    z = z_value(alpha)
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    n = len(f)
    parts: dict[str, list[Fit | str]] = {"labels only": [], "PPI++": []}
    strata_out = []
    for key, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        index = np.array(members, dtype=np.int64)
        fits = {
            lam_name: _stratum_fit(f, y, labelled, codes, index, lam, finite_population)
            for lam_name, lam in (("labels only", 0.0), ("PPI++", None))
        }
        for name, fit in fits.items():
            parts[name].append(fit if isinstance(fit, str) else _weighted(fit, len(index) / n))
        strata_out.append(
            StratumEstimate(
                stratum=str(key),
                share=len(index) / n,
                n_items=len(index),
                n_labels=int(labelled[index].sum()),
                judge_only=_judge_only(f[index], codes[index], z),
                labels_only=_estimate(
                    "labels only", fits["labels only"], index, labelled, codes, z
                ),
                ppi=_estimate("PPI++", fits["PPI++"], index, labelled, codes, z),
            )
        )
    every = np.arange(n)
    labels_only = _estimate(
        "labels only", _combined(parts["labels only"], strata_out), every, labelled, codes, z
    )
    ppi = _estimate("PPI++", _combined(parts["PPI++"], strata_out), every, labelled, codes, z)
    return StratifiedEstimate(
        confidence=1 - alpha,
        finite_population=finite_population,
        judge_only=_judge_only(f, codes, z),
        labels_only=labels_only,
        ppi=ppi,
        strata=strata_out,
        effective_labels=(
            labels_only.n_labels * labels_only.se**2 / ppi.se**2
            if labels_only.se is not None and ppi.se
            else None
        ),
    )


def _stratum_fit(
    f: FloatArray,
    y: FloatArray,
    labelled: BoolArray,
    codes: IntArray,
    index: IntArray,
    lam: float | None,
    finite: bool,
) -> Fit | str:
    """θ̂_k and its per-item terms (on the stratum's labelled items; zero elsewhere)."""
    big_n = len(index)
    mine = index[labelled[index]]
    n = len(mine)
    if n == 0:
        return "no labels"
    if n < 2 and n < big_n:
        return "one label: no spread to measure"
    f_l, y_l = f[mine], y[mine]
    if lam is None:
        lam = _tuned(f_l, y_l, codes[mine])
    d = y_l - lam * f_l
    value = float(lam * f[index].mean() + d.mean())
    correction = 1.0 - n / big_n if finite else 1.0
    psi = np.zeros(len(f))
    psi[mine] = np.sqrt(max(correction, 0.0)) * (d - d.mean()) / n
    return Fit(value, psi, codes, lam)


def _tuned(f_l: FloatArray, y_l: FloatArray, codes: IntArray) -> float:
    """The cluster-robust regression slope of label on judge, clipped to [0, 1]."""
    size = int(codes.max()) + 1
    cy = np.bincount(codes, weights=y_l - y_l.mean(), minlength=size)
    cf = np.bincount(codes, weights=f_l - f_l.mean(), minlength=size)
    spread = float(cf @ cf)
    return float(np.clip(float(cy @ cf) / spread, 0.0, 1.0)) if spread > 0 else 0.0


def _weighted(fit: Fit, weight: float) -> Fit:
    return Fit(weight * fit.value, weight * fit.psi, fit.codes, fit.lam)


def _combined(parts: list[Fit | str], strata: list[StratumEstimate]) -> Fit | str:
    """The strata's weighted estimates added up; a reason naming the strata that lack one."""
    lacking = [
        f"{s.stratum} ({reason})"
        for s, reason in zip(strata, parts, strict=True)
        if isinstance(reason, str)
    ]
    if lacking:
        return "every stratum needs labels: " + ", ".join(lacking)
    fits = [p for p in parts if isinstance(p, Fit)]
    return Fit(
        sum(p.value for p in fits),
        np.sum([p.psi for p in fits], axis=0),
        fits[0].codes,
        None,
    )


def _judge_only(f: FloatArray, codes: IntArray, z: float) -> MeanEstimate:
    """The judge's mean over the items: what it says, with no correction and no error."""
    return MeanEstimate(
        method="judge only",
        value=float(f.mean()) if len(f) else None,
        se=None,
        n_items=len(f),
        n_labels=0,
        n_clusters=len(np.unique(codes)),
        note=None if len(f) else "no items",
    )


def _estimate(
    method: str,
    fit: Fit | str,
    index: IntArray,
    labelled: BoolArray,
    codes: IntArray,
    z: float,
) -> MeanEstimate:
    chosen = index[labelled[index]]
    out = MeanEstimate(
        method="labels only" if method == "labels only" else "PPI++",
        value=None,
        se=None,
        n_items=len(index),
        n_labels=len(chosen),
        n_clusters=len(np.unique(codes[chosen])),
    )
    if isinstance(fit, str):
        out.note = fit
        return out
    out.value, out.lam = fit.value, fit.lam
    if out.n_clusters < 2 and len(chosen) < len(index):
        out.note = f"a standard error needs at least 2 clusters, got {out.n_clusters}"
        return out
    out.se = float(np.sqrt(fit.variance()))
    out.ci_low, out.ci_high = fit.value - z * out.se, fit.value + z * out.se
    return out
